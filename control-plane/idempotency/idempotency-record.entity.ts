import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

// The first answer to a creating POST, kept per caller and Idempotency-Key so a retry gets it again.
export const IdempotencyRecordSchema = defineEntity({
  name: 'IdempotencyRecord',
  extends: BaseSchema,
  uniques: [{ properties: ['callerKey', 'key'] }],
  properties: {
    /** Who asked: organization and credential subject, or the client address when anonymous. */
    callerKey: p.string(),
    key: p.string(),
    /** SHA-256 of method, path and body: same key with another request is a conflict. */
    requestHash: p.string(),
    statusCode: p.integer(),
    /** The answer, sealed (AES-256-GCM): it may hold a secret shown once. */
    responseBody: p.json<unknown>(),
    /**
     * The resource a creating request made, written in the transaction that made it: set while the answer is
     * still pending, it says the creation committed, and a retry answers with that resource.
     */
    resourceId: p.string().nullable(),
  },
});

export type IdempotencyRecord = InferEntity<typeof IdempotencyRecordSchema>;
