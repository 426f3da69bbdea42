// Routes are declared once, in their area (permission, method, path, schemas, handler), and mounted here:
// authorization, body parsing, validation and idempotency are applied uniformly, and the same declarations
// produce the OpenAPI document (openapi/document.ts).
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type Router from '@koa/router';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import type { z } from 'zod';
import type { AuditDetails } from '../audit/service.ts';
import type { AppState } from './context.ts';
import { BadRequestError, ClientClosedError, ForbiddenError, MalformedJsonError, PayloadTooLargeError, ServiceUnavailableError, UnauthenticatedError, UnsupportedMediaTypeError } from '../core/errors.ts';
import { isAllowed, type Permission } from '../core/permissions.ts';
import type { Page } from '../core/pagination.ts';
import { metricsTokenMatches } from '../../lib/metrics.ts';
import { databaseScope } from './database-scope.ts';
import { successBody } from './surface.ts';
import { parseInput } from './validate.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export type Reply = JsonReply | StreamReply;

interface ReplyAudit {
  /**
   * Added to the request's audit record. A promise: what only the end of a streamed answer tells (tokens
   * relayed); the record is then written once it settles, never holding the answer up.
   */
  auditDetails?: AuditDetails | Promise<AuditDetails>;
}

export interface JsonReply extends ReplyAudit {
  data: unknown;
  pagination?: { hasMore: boolean; nextCursor: string | null };
  /** Answer `data` as the whole body, outside either surface's shape (the OpenAPI document). */
  raw?: boolean;
  /** Answer 302 to this URL instead of a body (a browser sent on to an identity provider). */
  redirect?: string;
  /** A raw answer's own status instead of the route's success status (GraphQL's 400 for a document that does not validate). */
  status?: number;
}

/** A body of any size, piped to the client with backpressure (a route declaring `streams`). */
export interface StreamReply extends ReplyAudit {
  stream: Readable;
  /** One of the route's `streams` media types. */
  contentType: string;
  /** Offered as a download under this name (Content-Disposition: attachment). */
  filename?: string;
  /** Further response headers (e.g. Cache-Control of an event stream). */
  headers?: Readonly<Record<string, string>>;
  /**
   * Reading the stream queries no database (an inference relay): it is sent as it comes, without entering the
   * request's row-level-security scope again for each chunk (http/database-scope.ts).
   */
  readsNoDatabase?: boolean;
}

/** A list route's answer: the page's items as `data`, with the pagination envelope. */
export function pageReply(page: Page<unknown>): JsonReply {
  return { data: page.items, pagination: { hasMore: page.hasMore, nextCursor: page.nextCursor } };
}

/**
 * A creating route under Idempotency-Key whose first request may have created its resource and died before
 * answering (idempotency/middleware.ts): the retry answers with that resource instead of creating another.
 */
export interface IdempotentCreation {
  /** The entity the route creates (its class name, as in its `defineEntity`). */
  creates: string;
  /** The answer's `data` for the resource the first request created, read as it is now. */
  replay(id: string, state: AppState): Promise<unknown>;
}

export interface RouteSpec<Q extends z.ZodType | undefined, P extends z.ZodType | undefined, B extends z.ZodType | undefined> {
  /** What the caller's role and credential scope must grant (core/permissions.ts); `public` needs no credential, `internal` the metrics token. */
  permission: Permission;
  method: HttpMethod;
  /** OpenAPI form (`/api/deployments/{id}`); `/api/...` routes are also served under `/api/v1/...`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Resource type named in audit records: what the path's `id` names, when it has one. */
  resourceType: string;
  /** What a 201 answer's `id` names, when not `resourceType` (deploying a template creates a deployment): OpenAPI links follow it. */
  creates?: string;
  query?: Q;
  params?: P;
  body?: B;
  /**
   * The body only carries options, so it may be left out: the OpenAPI document marks it optional and a request
   * without one is taken as `{}`. Otherwise a route with a body answers 400 naming `body` when it has none.
   */
  optionalBody?: boolean;
  /** Schema of `data` in a successful JSON answer; lists also carry `pagination`. */
  response?: z.ZodType;
  /** Instead of `response`: the media types of a streamed answer, each with the schema the OpenAPI document shows. */
  streams?: Readonly<Record<string, z.ZodType>>;
  /** 101: the route switches the connection to a WebSocket (live-updates/service.ts); its answer is never written. */
  successStatus?: 101 | 200 | 201 | 302;
  /** The answer is `response` itself, outside either surface's envelope (the OpenAPI document): its handler replies `raw`. */
  raw?: boolean;
  /** A raw route's own failure body (GraphQL's errors), which the OpenAPI document offers beside Kiln's for 400 and `errors`. */
  rawError?: z.ZodType;
  list?: boolean;
  /** Failure statuses beyond those every route may answer. */
  errors?: number[];
  /** A creating POST: honours Idempotency-Key; a creation names what it creates, so a retry can answer with it. */
  idempotent?: boolean | IdempotentCreation;
  /** The handler also gets the body's exact text (`rawBody`): a webhook's signature covers those bytes, not the parsed JSON. */
  rawBody?: boolean;
  /**
   * `origin`: scheme and host as the client sees them (X-Forwarded-* when proxies are trusted). `signal`
   * aborts when the client goes away before its answer is complete: work done on its behalf stops with it.
   * `header` reads a request header ('' when absent), for what is no credential's or body's (a webhook's signature).
   * `ip`: the client's address as the audit trail records it.
   */
  handle(input: { query: Out<Q>; params: Out<P>; body: Out<B>; rawBody?: string; header(name: string): string; state: AppState; origin: string; ip: string; signal: AbortSignal }): Promise<Reply>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of routes with differing schemas
export type Route = RouteSpec<any, any, any>;

export function defineRoute<Q extends z.ZodType | undefined = undefined, P extends z.ZodType | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  spec: RouteSpec<Q, P, B>,
): Route {
  if (!spec.response === !spec.streams) throw new Error(`${spec.operationId} needs exactly one of response and streams`);
  return spec;
}

/** Paths a route answers on: its own, plus the `/api/v1` alias of platform routes. */
export function servedPaths(path: string): string[] {
  return path.startsWith('/api/') ? [path, path.replace(/^\/api\//, '/api/v1/')] : [path];
}

const MAX_BODY = '1mb';

const jsonBody = (includeUnparsed: boolean) => koaBody({
  json: true,
  jsonStrict: true,
  jsonLimit: MAX_BODY,
  multipart: false,
  urlencoded: false,
  // Only routes that declare a body parse one; a DELETE may (its id, for a client that sends it there).
  parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  text: false,
  includeUnparsed,
  onError: (error) => {
    if ((error as { status?: number }).status === 413) throw new PayloadTooLargeError(`Request body exceeds ${MAX_BODY}`);
    throw new MalformedJsonError('Request body is not valid JSON');
  },
});
const parseJson = jsonBody(false);
const parseJsonKeepingText = jsonBody(true);

function authorize(permission: Permission, internalToken: string | undefined): Middleware<AppState> {
  if (permission === 'internal') {
    // For scrapers, not users: the caller's credential, valid or not, plays no part.
    return async (ctx, next) => {
      // No credential is 401 whether or not the token is set; a credential while it is not set, 503.
      if (!ctx.get('Authorization')) throw new UnauthenticatedError('Invalid metrics token');
      if (internalToken === undefined) throw new ServiceUnavailableError('Kiln\'s internal metrics are off: KILN_METRICS_TOKEN is not set');
      if (!metricsTokenMatches(ctx.get('Authorization'), internalToken)) throw new UnauthenticatedError('Invalid metrics token');
      await next();
    };
  }
  return async (ctx, next) => {
    if (permission !== 'public') {
      if (ctx.state.authError) throw ctx.state.authError;
      const principal = ctx.state.principal;
      if (!principal) throw new UnauthenticatedError('Invalid API key');
      if (!isAllowed(permission, principal.permissions, principal.scope, principal.platformAdmin)) throw new ForbiddenError('Insufficient permissions');
    }
    await next();
  };
}

/** A body is there when it has a length or is streamed in chunks (no Content-Length). */
const hasBody = (ctx: Koa.ParameterizedContext<AppState>) => Boolean(ctx.request.length) || ctx.get('Transfer-Encoding') !== '';

const requireJson: Middleware<AppState> = async (ctx, next) => {
  if (hasBody(ctx) && !ctx.is('application/json')) throw new UnsupportedMediaTypeError('Content-Type must be application/json');
  await next();
};

/** A route whose body the document marks required, asked without one: 400 naming `body`, as a missing field is. */
const requireBody: Middleware<AppState> = async (ctx, next) => {
  if (!hasBody(ctx)) throw new BadRequestError('Invalid body: required (a JSON object)', { fields: [{ field: 'body', message: 'required' }] });
  await next();
};

/**
 * Aborts when the response closes unfinished: the client went away. (The request's own 'close' is no
 * sign of that: it fires as soon as its body has been read.)
 */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const gone = () => controller.abort(new ClientClosedError('The client closed the connection before its answer was complete'));
  if (!res.socket || res.socket.destroyed) gone();
  else res.once('close', () => { if (!res.writableFinished) gone(); });
  return controller.signal;
}

/** Per path segment, 0 for a literal and 1 for a parameter: ordering by it puts literals first. */
const parameterMask = (path: string) => path.split('/').map((segment) => (segment.startsWith('{') ? '1' : '0')).join('');

export interface MountOptions {
  idempotency: (route: Route) => Middleware<AppState>;
  /** KILN_METRICS_TOKEN: what `internal` routes ask for; unset, they answer 503 to a caller sending a credential (401 without one). */
  internalToken: string | undefined;
}

/** A router path with its parameters' names left out: `/v1/x/:id` and `/v1/x/:token` are one template. */
const templateOf = (path: unknown) => String(path).replace(/:\w+/g, ':');

/**
 * Of the templates that match a URL, only the most specific answers on it: the first mounted, since literal
 * segments sort before parameters. `/v1/templates/deploy` is then not also `/v1/templates/{id}`: its `Allow`
 * (OPTIONS, 405) lists its own methods, and a method only `/v1/templates/{id}` has is 405 there.
 */
function answerOnMostSpecificTemplate(router: Router<AppState>): void {
  const match = router.match.bind(router);
  router.match = (path, method) => {
    const result = match(path, method);
    const first = result.path.find((layer) => layer.methods.length > 0);
    if (!first) return result;
    const kept = (layer: typeof first) => layer.methods.length === 0 || templateOf(layer.path) === templateOf(first.path);
    const pathAndMethod = result.pathAndMethod.filter(kept);
    return { path: result.path.filter(kept), pathAndMethod, route: pathAndMethod.some((layer) => layer.methods.length > 0) };
  };
}

export function mountRoutes(router: Router<AppState>, routes: readonly Route[], extra: MountOptions): void {
  answerOnMostSpecificTemplate(router);
  // The router answers with the first route that matches, so a literal segment must come before a parameter
  // in the same place (/v1/models/templates before /v1/models/{id}), whichever module declared its route
  // first; the sort is stable, so routes otherwise keep their modules' order.
  for (const route of [...routes].sort((a, b) => compareText(parameterMask(a.path), parameterMask(b.path)))) {
    const chain: Middleware<AppState>[] = [
      async (ctx, next) => {
        ctx.state.action = route.operationId;
        ctx.state.resourceType = route.resourceType;
        await next();
      },
      authorize(route.permission, extra.internalToken),
      databaseScope(route.permission),
    ];
    if (route.body) chain.push(requireJson, ...(route.optionalBody ? [] : [requireBody]), route.rawBody ? parseJsonKeepingText : parseJson);
    // Validation before idempotency: only well-formed requests are looked up and stored.
    chain.push(async (ctx, next) => {
      ctx.state.input = {
        query: route.query ? parseInput(route.query, ctx.query, 'query') : undefined,
        params: route.params ? parseInput(route.params, ctx.params, 'path') : undefined,
        body: route.body ? parseInput(route.body, ctx.request.body ?? {}, 'body') : undefined,
      };
      await next();
    });
    if (route.idempotent) chain.push(extra.idempotency(route));
    chain.push(async (ctx) => {
      // Where this API is reached (SSO redirect URIs, links): from a Host header that must be a valid one.
      const origin = `${ctx.protocol}://${ctx.host}`;
      if (!URL.canParse(origin)) throw new BadRequestError('Invalid header Host', { header: 'Host' });
      const rawBody = route.rawBody ? ctx.request.rawBody : undefined;
      const replayOf = ctx.state.idempotentReplayOf;
      const reply = replayOf !== undefined && typeof route.idempotent === 'object' ? { data: await route.idempotent.replay(replayOf, ctx.state) } : await route.handle({ ...ctx.state.input!, rawBody, header: (name) => ctx.get(name), state: ctx.state, origin, ip: ctx.ip, signal: clientGone(ctx.res) });
      if (reply.auditDetails) ctx.state.auditDetails = reply.auditDetails;
      if ('redirect' in reply && reply.redirect) return ctx.redirect(reply.redirect);
      // A change is audited against the resource it answers with, unless the handler named another.
      const answeredId = 'data' in reply ? (reply.data as { id?: unknown } | null)?.id : undefined;
      if (ctx.method !== 'GET' && ctx.state.resourceId === undefined && typeof answeredId === 'string') ctx.state.resourceId = answeredId;
      ctx.status = ('status' in reply ? reply.status : undefined) ?? route.successStatus ?? 200;
      if ('stream' in reply) {
        if (!route.streams?.[reply.contentType]) throw new Error(`${route.operationId} answered ${reply.contentType}, which it does not declare`);
        if (reply.filename) ctx.attachment(reply.filename);
        if (reply.headers) ctx.set(reply.headers);
        if (reply.readsNoDatabase) ctx.state.streamReadsNoDatabase = true;
        ctx.type = reply.contentType;
        ctx.body = reply.stream;
      } else {
        ctx.body = reply.raw ? reply.data : successBody(ctx.state.surface, reply.data, reply.pagination ? { pagination: reply.pagination } : {});
      }
    });
    for (const path of servedPaths(route.path)) {
      // The path as declared, never the URL: metrics label requests by it (http/metrics.ts).
      const named: Middleware<AppState> = async (ctx, next) => {
        ctx.state.route = path;
        await next();
      };
      router.register(path.replace(/\{(\w+)\}/g, ':$1'), [route.method], [named, ...chain]);
    }
  }
}
