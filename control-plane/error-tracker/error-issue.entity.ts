import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/**
 * Unhandled errors (answered as 500) grouped by fingerprint: the error's name and its top stack frames.
 * One row per fingerprint, counted up by a single upsert; createdAt is when it was first seen.
 */
export const ErrorIssueSchema = defineEntity({
  name: 'ErrorIssue',
  extends: BaseSchema,
  indexes: [{ properties: ['lastSeenAt'] }],
  properties: {
    fingerprint: p.string().unique(),
    name: p.string(),
    /** The latest occurrence's message and stack. */
    message: p.text(),
    stack: p.text(),
    count: p.integer(),
    lastSeenAt: p.datetime(3),
    /** Method, path and request id of the latest occurrence, to find it in the logs. */
    lastRequest: p.string(),
  },
});

export type ErrorIssue = InferEntity<typeof ErrorIssueSchema>;
