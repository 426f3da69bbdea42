// The `from`/`to` query parameters of a list over time (the audit trail, the activity feed): ISO 8601
// instants with an offset, `to` exclusive and later than `from`.
import { z } from 'zod';

export const instant = z.iso.datetime({ offset: true });

/** `to` must come after `from`; reported on `to`. */
export function periodInOrder<S extends z.ZodObject<{ from: z.ZodOptional<typeof instant>; to: z.ZodOptional<typeof instant> }>>(schema: S) {
  return schema.refine((q) => !q.from || !q.to || Date.parse(q.from) < Date.parse(q.to), { path: ['to'], message: 'must be later than from' });
}
