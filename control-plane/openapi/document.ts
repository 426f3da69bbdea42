// The OpenAPI 3.1 document, generated from the route declarations and their zod schemas (zod-openapi):
// the schemas that validate requests are the ones described.
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { PaginationSchema } from '../core/pagination.ts';
import { servedPaths, type Route } from '../http/routes.ts';
import { surfaceOf } from '../http/surface.ts';
import { reasonPhrase } from '../core/errors.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../idempotency/middleware.ts';

const ReferenceError = z.object({
  error: z.string().meta({ example: 'Unauthorized' }),
  message: z.string().meta({ example: 'Invalid API key' }),
  code: z.string().meta({ example: 'INVALID_API_KEY' }),
  statusCode: z.number().int().meta({ example: 401 }),
}).meta({ id: 'ReferenceError' });

const PlatformError = z.object({
  success: z.literal(false),
  data: z.null(),
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) }),
}).meta({ id: 'PlatformError' });

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed per minute', schema: { type: 'integer' as const } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' as const } },
  'X-RateLimit-Reset': { description: 'Unix time at which the window resets', schema: { type: 'integer' as const } },
  'X-Request-Id': { description: 'Request id, also in the logs', schema: { type: 'string' as const } },
};

function successSchema(route: Route, response: z.ZodType, platform: boolean): z.ZodType {
  if (route.raw) return response;
  if (!platform) return route.list ? z.object({ data: response, pagination: PaginationSchema }) : response;
  return z.object({
    success: z.literal(true),
    data: response,
    ...(route.list ? { pagination: PaginationSchema } : {}),
    error: z.null(),
  });
}

/** A streamed answer in each of its media types; otherwise JSON in the surface's shape. */
function successContent(route: Route, platform: boolean) {
  if (route.streams) return Object.fromEntries(Object.entries(route.streams).map(([type, schema]) => [type, { schema }]));
  return { 'application/json': { schema: successSchema(route, route.response!, platform) } };
}

const operationIdOf = (route: Route, path: string) => (path.startsWith('/api/v1/') ? `${route.operationId}ApiV1` : route.operationId);

const hasId = (schema: z.ZodType | undefined) => schema instanceof z.ZodObject && 'id' in schema.shape;

/**
 * OpenAPI links from a creation (201) to every operation on what it created: the operations of the same
 * resource type that take an `id` in their path, query or body, on the same surface and prefix. Clients
 * (and Schemathesis' stateful phase) follow them to create a resource, then read, change and delete it.
 */
function creationLinks(route: Route, path: string, routes: readonly Route[]) {
  if (route.successStatus !== 201 || !hasId(route.response)) return undefined;
  const created = surfaceOf(path) === 'platform' ? '$response.body#/data/id' : '$response.body#/id';
  const links: Record<string, { operationId: string; parameters?: Record<string, string>; requestBody?: Record<string, string> }> = {};
  for (const target of routes) {
    if (target === route || target.resourceType !== (route.creates ?? route.resourceType)) continue;
    const targetPath = servedPaths(target.path)
      .find((served) => surfaceOf(served) === surfaceOf(path) && served.startsWith('/api/v1/') === path.startsWith('/api/v1/'));
    if (!targetPath) continue;
    const operationId = operationIdOf(target, targetPath);
    if (hasId(target.params)) links[operationId] = { operationId, parameters: { 'path.id': created } };
    else if (hasId(target.query)) links[operationId] = { operationId, parameters: { 'query.id': created } };
    else if (hasId(target.body)) links[operationId] = { operationId, requestBody: { id: created } };
  }
  return Object.keys(links).length ? links : undefined;
}

function operation(route: Route, path: string, routes: readonly Route[]): ZodOpenApiOperationObject {
  const platform = surfaceOf(path) === 'platform';
  const isPublic = route.permission === 'public';
  // The metrics token answers for the route itself: a bad one is 401, and no credential is ever short of a permission (403).
  const isInternal = route.permission === 'internal';
  const errorSchema = platform ? PlatformError : ReferenceError;
  // What any route may answer besides its own errors: malformed input (400), too many requests (429), a bad
  // or insufficient credential (401, 403), a body too large (413), not JSON (415) or breaking a rule (422),
  // and an Idempotency-Key used before with another request (409).
  const statuses = new Set([
    400, 429, ...(isPublic ? [] : isInternal ? [401] : [401, 403]), ...(route.body ? [413, 415, 422] : []), ...(route.idempotent ? [409] : []), ...(route.errors ?? []),
  ]);
  const success = route.successStatus ?? 200;
  return {
    operationId: operationIdOf(route, path),
    summary: route.summary,
    tags: [route.tag],
    security: isPublic ? [] : isInternal ? [{ metricsToken: [] }] : [{ bearer: [] }],
    requestParams: {
      ...(route.query ? { query: route.query } : {}),
      ...(route.params ? { path: route.params } : {}),
      ...(route.idempotent ? { header: z.object({ 'Idempotency-Key': z.string().regex(IDEMPOTENCY_KEY_PATTERN).optional().meta({ description: 'Replays the first answer to the same request: 1 to 255 visible ASCII characters.' }) }) } : {}),
    },
    ...(route.body ? { requestBody: { required: !route.optionalBody, content: { 'application/json': { schema: route.body } } } } : {}),
    responses: {
      [success]: success === 101
        ? { description: `${reasonPhrase(success)}: the connection is now a WebSocket (RFC 6455) carrying JSON messages`, headers: { Upgrade: { description: 'websocket', schema: { type: 'string' as const } } } }
        : success === 302
        ? { description: reasonPhrase(success), headers: { ...RATE_LIMIT_HEADERS, Location: { description: 'Where the client goes next', schema: { type: 'string' as const } } } }
        : {
          description: reasonPhrase(success),
          headers: route.streams ? { ...RATE_LIMIT_HEADERS, 'Content-Disposition': { description: 'attachment; filename=...', schema: { type: 'string' as const } } } : RATE_LIMIT_HEADERS,
          content: successContent(route, platform),
          links: creationLinks(route, path, routes),
        },
      ...Object.fromEntries([...statuses].sort().map((status) => [status, {
        description: reasonPhrase(status),
        ...(status === 429 || status === 503 ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' as const } } } } : {}),
        content: { 'application/json': { schema: route.rawError && (status === 400 || route.errors?.includes(status)) ? z.union([errorSchema, route.rawError]) : errorSchema } },
      }])),
      // The HTTP server answers this one before the app sees the request (http/client-error.ts), in the surface's format.
      431: { description: `${reasonPhrase(431)}: the request line and headers exceed 16 KB`, content: { 'application/json': { schema: errorSchema } } },
    },
  };
}

export function buildOpenApiDocument(routes: readonly Route[]) {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    for (const path of servedPaths(route.path)) {
      paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route, path, routes) };
    }
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Kiln API',
      version: '1.0.0',
      description: 'Deploy and run AI models (vLLM) on GPU infrastructure. The reference API is under /v1; the web platform API under /api and /api/v1.',
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key (sk_live_/sk_test_), an access token from login, or (server-to-server only, with X-Organization-ID) a service role key (srk_live_/srk_test_).' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'KILN_METRICS_TOKEN, the internal token of scrapers such as Prometheus (GET /metrics/internal); no user credential stands in for it.' },
      },
    },
    paths,
  });
}
