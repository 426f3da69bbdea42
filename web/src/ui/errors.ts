// Kiln's errors, for people: what went wrong (the API's message) and what to do about it (by code).
import { KilnError } from '../api.ts';

/** What the user can do about each code; the API's message says what happened. */
const ADVICE: Record<string, string> = {
  INVALID_API_KEY: 'Your session ended: sign in again.',
  UNAUTHENTICATED: 'Your session ended: sign in again.',
  INVALID_CREDENTIALS: 'Check the e-mail address and password, then try again.',
  INSUFFICIENT_PERMISSIONS: 'Your role does not allow this: ask an owner or admin of the organization.',
  VALIDATION_ERROR: 'Correct the highlighted field and send it again.',
  INVALID_REQUEST: 'Correct the highlighted field and send it again.',
  RESOURCE_EXISTS: 'Choose another name, or use the one that exists.',
  RESOURCE_IN_USE: 'Stop using it first, then try again.',
  INSUFFICIENT_CREDITS: 'Add credits under Billing, then try again.',
  BUDGET_EXCEEDED: 'A budget stops this: raise it under Alerts and budgets, or wait for the next period.',
  RATE_LIMIT_EXCEEDED: 'Too many requests: wait a minute and try again.',
  NOT_FOUND: 'It may have been deleted: go back to the list.',
  DEPLOYMENT_NOT_FOUND: 'It may have been deleted: go back to the deployments list.',
  GPU_UNAVAILABLE: 'No GPU of that type is free: try another GPU type or region, or later.',
  SERVICE_UNAVAILABLE: 'Kiln is busy or a service it needs is down: try again in a minute.',
  PAYMENTS_UNAVAILABLE: 'Payments are not set up on this Kiln: ask its administrator.',
  NETWORK: 'Kiln could not be reached: check your connection and try again.',
};

export interface FieldError {
  field: string;
  message: string;
}

export interface Explained {
  title: string;
  advice: string;
  code: string;
  requestId?: string;
  fields: FieldError[];
}

/** Field errors from details.fields (/api surface) or the message "Invalid field <name>: ..." or "Invalid query parameter <name>: ..." (/v1 surface; a page's filters are query parameters). */
export function fieldErrors(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of explain(error).fields) out[f.field] ??= f.message;
  return out;
}

export function explain(error: unknown): Explained {
  if (error instanceof KilnError) {
    const listed = Array.isArray(error.details.fields) ? (error.details.fields as FieldError[]) : [];
    const parsed = /^Invalid (?:field|query parameter) ([\w.]+): (.*)$/.exec(error.message);
    const fields = listed.length ? listed : parsed ? [{ field: parsed[1]!, message: parsed[2]! }] : [];
    const fallback = error.statusCode >= 500 ? ADVICE.SERVICE_UNAVAILABLE! : 'Try again; if it keeps failing, contact support with the request id.';
    if (fields.length) {
      // The form marks each field; the banner sums up, naming every field in case the form lacks one.
      const named = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
      return {
        title: fields.length > 1 ? 'Some fields need correcting' : 'A field needs correcting',
        advice: `Correct the highlighted field and send it again (${named}).`, code: error.code, requestId: error.requestId, fields,
      };
    }
    const wait = error.retryAfterSeconds ?? (typeof error.details.retry_after === 'number' ? error.details.retry_after : undefined);
    if (error.code === 'RATE_LIMIT_EXCEEDED' && wait !== undefined) {
      return { title: error.message, advice: `Too many requests from this sign-in: try again in ${wait} second${wait === 1 ? '' : 's'}.`, code: error.code, requestId: error.requestId, fields };
    }
    return { title: error.message || `Request failed (${error.statusCode})`, advice: ADVICE[error.code] ?? fallback, code: error.code, requestId: error.requestId, fields };
  }
  if (error instanceof TypeError) return { title: 'Kiln could not be reached', advice: ADVICE.NETWORK!, code: 'NETWORK', fields: [] };
  return { title: error instanceof Error ? error.message : 'Something went wrong', advice: 'Reload the page and try again.', code: 'ERROR', fields: [] };
}
