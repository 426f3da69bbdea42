// The Koa application, built from explicit dependencies (no globals) and the list of API modules
// (modules.ts): each module builds its services and declares its routes; this file adds the middleware
// every request passes through, in order, and runs the modules' lifecycles (start in list order, stop in reverse).
import { METHODS, type Server } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import { deriveKey } from '../lib/keys.ts';
import { metricsTokenMatches } from '../lib/metrics.ts';
import { createCursorCodec } from './core/pagination.ts';
import { declaredRouteOf, logAnswerFailures } from './http/app-wiring.ts';
import { auditTrail } from './http/audit.ts';
import { authenticate } from './http/authenticate.ts';
import type { AppState } from './http/context.ts';
import { errorHandler } from './http/error-handler.ts';
import { dependencyGuard } from './http/dependency-guard.ts';
import { measureRequests } from './http/metrics.ts';
import { databaseCounters } from './http/rate-counters.ts';
import { rateLimit } from './http/rate-limit.ts';
import { requestContext } from './http/request-context.ts';
import { mountRoutes, type Route } from './http/routes.ts';
import { HEALTH_PATHS, isProbe } from './health/routes.ts';
import { idempotency } from './idempotency/middleware.ts';
import type { ApiModule, AppDeps, ModuleContext, Services } from './module.ts';
import { API_MODULES } from './modules.ts';

/** The Koa application, and its modules' lifecycles, which server.ts runs around the HTTP server. */
export type KilnApp = Koa<AppState> & {
  /** Every route the app serves, as declared (method, path, permission, schemas). */
  readonly routes: readonly Route[];
  /** The services the modules built. */
  readonly services: Services;
  /** Runs each module's start in list order (background loops, the secrets' re-seal, the live-updates sockets on `server`). Call before the server listens. */
  start(server: Server): Promise<void>;
  /** Runs each module's preClose in reverse order (the live-updates sockets close). Call as the server begins to close. */
  preClose(): Promise<void>;
  /** Runs each module's close in reverse order (loops stop, the inference gateway's pod watches stop, queued audit records are written). Call once the server stopped answering, before the database closes. */
  close(): Promise<void>;
};

export function createApp(deps: AppDeps): KilnApp {
  const routes: Route[] = [];
  const context: ModuleContext = {
    ...deps,
    key: (purpose) => deriveKey(deps.config.signingKey, purpose),
    cursors: createCursorCodec(deriveKey(deps.config.signingKey, 'cursor')),
    services: servicesBuiltSoFar(),
    routes: () => routes,
  };
  for (const module of API_MODULES) Object.assign(context.services, module.services?.(context));
  for (const module of API_MODULES) routes.push(...module.routes?.(context) ?? []);
  const services = context.services;

  // Every method Node accepts counts as implemented: a path that exists answers any method it lacks with
  // 405 and its Allow header (the router's default list would make the rest 501), and an unknown path 404.
  const router = new Router<AppState>({ methods: METHODS });
  mountRoutes(router, routes, { idempotency: idempotency({ key: context.key('idempotency'), orm: deps.orm }), internalToken: deps.config.metricsToken });
  // The declared path of whatever route the URL names, for requests answered before reaching it.
  const routeOf = declaredRouteOf(router);

  const app = new Koa<AppState>({ proxy: deps.config.trustProxy });
  logAnswerFailures(app, deps.log);
  app.use(requestContext({ log: deps.log, orm: deps.orm, isProbe }));
  app.use(measureRequests(services.metrics, routeOf));
  // A mutation's record is written before its answer, unless the database is away (then queued, as reads' are).
  app.use(auditTrail(services.audit, { writeBeforeAnswer: () => services.dependencies.databaseAvailable() }));
  app.use(errorHandler({ onUnhandled: (error, context) => services.errorTracker.capture(error, context) }));
  const fallbacks = API_MODULES.flatMap((module) => module.fallback?.(context) ?? []);
  if (fallbacks.length) {
    app.use((ctx, next) => {
      if (router.match(ctx.path, ctx.method).path.length > 0) return next();
      const run = (i: number): Promise<unknown> => (i < fallbacks.length ? Promise.resolve(fallbacks[i]!(ctx, () => run(i + 1))) : next());
      return run(0);
    });
  }
  // Past what needs no database (the dashboard's files, health, Kiln's metrics), a request the database cannot
  // serve now is answered 503 at once.
  app.use(dependencyGuard(services.dependencies, isProbe));
  app.use(authenticate({ accessTokens: services.accessTokens, serviceKeys: services.serviceKeys, ...services.credentials.wrap(services) }));
  const { metricsToken } = deps.config;
  // Inference (the routes that need deployments:infer) is limited apart from management.
  const inferencePaths = new Set(routes.filter((route) => route.permission === 'deployments:infer').map((route) => route.path));
  app.use(rateLimit({
    counters: databaseCounters(deps.pool), limits: deps.rateLimits,
    isInference: (method, path) => inferencePaths.has(routeOf(method, path) ?? ''),
    isHealthProbe: (path) => HEALTH_PATHS.has(path),
    isScraper: metricsToken === undefined ? undefined : (authorization) => metricsTokenMatches(authorization, metricsToken),
  }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  const reversed = API_MODULES.toReversed();
  return Object.assign(app, {
    routes,
    services,
    start: async (server: Server) => {
      for (const module of API_MODULES) await module.start?.({ ...context, server, app });
    },
    preClose: () => everyModule(reversed, (module) => module.preClose?.(services)),
    close: () => everyModule(reversed, (module) => module.close?.(services)),
  });
}

/** Runs `step` for each module in turn, all of them even when one fails: one area's failure to stop stops no other's. */
async function everyModule(modules: readonly ApiModule[], step: (module: ApiModule) => Promise<void> | void): Promise<void> {
  const errors: unknown[] = [];
  for (const module of modules) {
    try {
      await step(module);
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} modules failed to stop`);
}

/** The services object modules fill in order: reading one no module has built yet is a wiring mistake, said at start-up. */
function servicesBuiltSoFar(): Services {
  return new Proxy({} as Services, {
    get(target, name) {
      if (typeof name === 'string' && !(name in target)) throw new Error(`service ${name} is used before the module that builds it (control-plane/modules.ts lists modules in build order)`);
      return Reflect.get(target, name);
    },
  });
}
