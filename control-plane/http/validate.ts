// Schema validation with the spec's split: wrong types, missing fields and unknown query values are 400;
// input that parses but breaks a rule (format, range, allowed value) is 422. Both name the field.
import type { z } from 'zod';
import { BadRequestError, ValidationError } from '../core/errors.ts';

const TYPE_ISSUES = new Set(['invalid_type', 'unrecognized_keys', 'invalid_union', 'invalid_key']);

export function parseInput<S extends z.ZodType>(schema: S, input: unknown, where: 'body' | 'query' | 'path'): z.output<S> {
  // PostgreSQL text cannot hold NUL: refuse it here rather than fail in the database.
  if (containsNul(input)) throw new BadRequestError(`Invalid ${where}: text must not contain NUL characters`, {});
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fields = result.error.issues.map((issue) => ({ field: issue.path.join('.') || where, message: issue.message }));
  const first = fields[0]!;
  const message = where === 'body' ? `Invalid field ${first.field}: ${first.message}` : `Invalid ${where} parameter ${first.field}: ${first.message}`;
  // Query and path parameters arrive as strings: anything they fail is a malformed request. In a body,
  // a missing field is a type error too, whatever check reported it.
  const typeError = where !== 'body'
    || result.error.issues.some((issue) => TYPE_ISSUES.has(issue.code) || valueAt(input, issue.path) === undefined);
  throw typeError ? new BadRequestError(message, { fields }) : new ValidationError(message, { fields });
}

/**
 * What a DELETE names in its query (`?id=`) or, as a client may send it, in its JSON body (`{"id"}`): the one
 * given (the same in both is accepted), else 400 naming the field.
 */
export function queryOrBodyField(field: string, query: string | undefined, body: string | undefined): string {
  if (query !== undefined && body !== undefined && query !== body) {
    throw new BadRequestError(`Invalid field ${field}: the query and the body name different values`, { fields: [{ field, message: 'the query and the body name different values' }] });
  }
  const value = query ?? body;
  if (value === undefined) throw new BadRequestError(`Invalid query parameter ${field}: required (in the query or the JSON body)`, { fields: [{ field, message: 'required' }] });
  return value;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Iterative, so arbitrarily deep JSON cannot exhaust the stack. */
function containsNul(input: unknown): boolean {
  const pending = [input];
  while (pending.length) {
    const value = pending.pop();
    if (typeof value === 'string' && value.includes('\u0000')) return true;
    if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes('\u0000')) return true;
        pending.push(item);
      }
    }
  }
  return false;
}
