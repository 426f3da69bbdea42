import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

// Plain ids rather than foreign keys: the audit trail outlives the keys and users it mentions.
export const AuditLogSchema = defineEntity({
  name: 'AuditLog',
  extends: BaseSchema,
  // The audit filters' indexes (user, API key, resource id) are written in Migration20261122040000Audit.
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    organizationId: p.string(),
    action: p.string(),
    resourceType: p.string(),
    resourceId: p.string().nullable(),
    userId: p.string(),
    apiKeyId: p.string().nullable(),
    ipAddress: p.string(),
    statusCode: p.integer(),
    /** What the request carried beyond its route (an inference's token counts, for billing). */
    details: p.json<Record<string, unknown>>().nullable(),
  },
});

export type AuditLog = InferEntity<typeof AuditLogSchema>;
