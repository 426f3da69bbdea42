// Keyset pagination: `sort` over an allow-list (several fields, `-` for descending, id as the final
// tie-break) and an opaque cursor signed with HMAC, so a client can neither forge nor edit one; a cursor
// only continues the ordering it was issued for.
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { BadRequestError } from './errors.ts';

export type Direction = 'asc' | 'desc';
export type SortSpec<F extends string> = ReadonlyArray<readonly [F, Direction]>;

/** A `sort` query schema accepting the given API field names. */
export function sortParam<F extends string>(fields: readonly F[], fallback: string) {
  return z.string().max(200).default(fallback).transform((value, ctx): SortSpec<F> => {
    const spec: Array<readonly [F, Direction]> = [];
    for (const part of value.split(',')) {
      const field = part.replace(/^-/, '') as F;
      if (!fields.includes(field) || spec.some(([f]) => f === field)) {
        ctx.addIssue({ code: 'custom', message: `sort field must be one of ${fields.join(', ')}, each at most once` });
        return z.NEVER;
      }
      spec.push([field, part.startsWith('-') ? 'desc' : 'asc']);
    }
    return spec;
  }).meta({ description: `Comma-separated fields from ${fields.join(', ')}; prefix \`-\` for descending.`, example: fallback });
}

export function createCursorCodec(key: Buffer) {
  // One KeyObject for every cursor: importing the raw key on each call costs more than the HMAC itself.
  const secret = createSecretKey(key);
  const mac = (payload: string) => createHmac('sha256', secret).update(payload).digest().subarray(0, 16);
  return {
    /** Wraps a position (the last row's sort-key values) together with the ordering it belongs to. */
    encode(position: string, ordering: string): string {
      const payload = Buffer.from(JSON.stringify([ordering, position])).toString('base64url');
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    decode(cursor: string, ordering: string): string {
      const [payload, signature, extra] = cursor.split('.');
      const given = Buffer.from(signature ?? '', 'base64url');
      const expected = mac(payload ?? '');
      if (!payload || extra !== undefined || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new BadRequestError('Invalid query parameter cursor: not a cursor issued by this API', { parameter: 'cursor' });
      }
      const [issuedFor, position] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [string, string];
      if (issuedFor !== ordering) {
        throw new BadRequestError('Invalid query parameter cursor: it was issued for another sort order', { parameter: 'cursor' });
      }
      return position;
    },
    /**
     * One page of a keyset query that read `limit + 1` rows: the first `limit`, whether more follow, and the
     * cursor after the last (its position as `position` gives it).
     */
    page<T>(rows: readonly T[], limit: number, ordering: string, position: (last: T) => unknown): Page<T> {
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      const hasMore = rows.length > limit && last !== undefined;
      return { items, hasMore, nextCursor: hasMore ? this.encode(JSON.stringify(position(last)), ordering) : null };
    },
  };
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

export type CursorCodec = ReturnType<typeof createCursorCodec>;

/** The query parameters of every paged list: spread into its query schema. */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Page size, 1 to 100.' }),
  cursor: z.string().max(2048).optional().meta({ description: 'pagination.nextCursor of the previous page.' }),
};

export const PaginationSchema = z.object({
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
}).meta({ id: 'Pagination' });
