// The two API surfaces and their body shapes: the reference API (/v1) answers with bare objects and
// `{error, message, code, statusCode}` errors; the platform API (/api, /api/v1) wraps everything in
// `{success, data, error}`.
import { reasonPhrase, type ErrorDescription } from '../core/errors.ts';

export type Surface = 'reference' | 'platform';

export function surfaceOf(path: string): Surface {
  return path === '/api' || path.startsWith('/api/') ? 'platform' : 'reference';
}

export function errorBody(surface: Surface, e: Pick<ErrorDescription, 'status' | 'code' | 'message' | 'details'>): unknown {
  return surface === 'reference'
    ? { error: reasonPhrase(e.status), message: e.message, code: e.code, statusCode: e.status }
    : { success: false, data: null, error: { code: e.code, message: e.message, details: e.details } };
}

export function successBody(surface: Surface, data: unknown, extra: Record<string, unknown> = {}): unknown {
  if (surface === 'reference') return Object.keys(extra).length ? { data, ...extra } : data;
  return { success: true, data, ...extra, error: null };
}
