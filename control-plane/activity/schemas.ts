// GET /v1/activity: its filters and the shape of one entry of the feed.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';
import { pageQuery } from '../core/pagination.ts';
import { instant, periodInOrder } from '../core/period-query.ts';

export const ACTIVITY_CATEGORIES = ['deployments', 'members', 'keys', 'alerts', 'billing'] as const;
export type ActivityCategory = (typeof ACTIVITY_CATEGORIES)[number];

/** `deployments` or `deployments,alerts`: each a known category, at least one. */
const categories = z.string().max(200).transform((value, ctx): ActivityCategory[] => {
  const parts = value.split(',').map((part) => part.trim());
  if (parts.some((part) => !(ACTIVITY_CATEGORIES as readonly string[]).includes(part))) {
    ctx.addIssue({ code: 'custom', message: `each category must be one of ${ACTIVITY_CATEGORIES.join(', ')}` });
    return z.NEVER;
  }
  return [...new Set(parts as ActivityCategory[])];
}).meta({ description: `One category or a comma-separated list of ${ACTIVITY_CATEGORIES.join(', ')}.`, example: 'deployments,alerts' });

export const ListActivityQuery = periodInOrder(z.object({
  ...pageQuery,
  category: categories.optional(),
  type: z.string().min(1).max(64).regex(/^[a-z_]+\.[a-z_]+$/, 'expected a type such as deployment.running').optional()
    .meta({ description: 'Entries of this type only.', example: 'deployment.running' }),
  resourceId: z.string().min(1).max(64).optional().meta({ description: 'Entries about this resource only.', example: 'dep_0123456789abcdefghij' }),
  from: instant.optional().meta({ description: 'Occurred at or after this instant (ISO 8601).', example: '2026-11-01T00:00:00Z' }),
  to: instant.optional().meta({ description: 'Occurred before this instant (ISO 8601).', example: '2026-12-01T00:00:00Z' }),
  ...orgIdQuery,
}));

export const ActivityView = z.object({
  id: z.string().meta({ description: 'Unique in the feed (an entry drawn from a record\'s later change carries a suffix).', example: 'evt_0123456789abcdefghij' }),
  type: z.string().meta({ example: 'deployment.running' }),
  category: z.enum(ACTIVITY_CATEGORIES),
  summary: z.string().meta({ example: 'Deployment chat is running' }),
  actor: z.object({
    kind: z.enum(['user', 'system']),
    id: z.string().meta({ description: 'A user id, or a system actor such as system:billing.', example: 'usr_0123456789abcdefghij' }),
    email: z.string().nullable(),
  }).nullable().meta({ description: 'Who acted; null where the record does not say (a workflow\'s lifecycle edge, a revoked key).' }),
  resource: z.object({ type: z.string(), id: z.string(), name: z.string().nullable() }),
  occurredAt: z.iso.datetime(),
}).meta({ id: 'ActivityEntry' });

export type ListActivityInput = z.output<typeof ListActivityQuery>;
export type ActivityBody = z.infer<typeof ActivityView>;
