// POST /v1/graphql: GraphQL Yoga's fetch handler inside a Kiln route, so the request passes authentication,
// the rate limit, the audit trail and the organization's database scope as every REST route does. Yoga
// (yoga.ts) parses, validates and executes; this file gives each resolver the caller's permissions and audit.
import type { Logger } from 'pino';
import type { AuditService } from '../audit/service.ts';
import { describeError, ForbiddenError } from '../core/errors.ts';
import { loadOnFirstUse } from '../core/load-on-first-use.ts';
import { isAllowed, type Permission } from '../core/permissions.ts';
import type { AppState } from '../http/context.ts';
import { defineRoute, type Route } from '../http/routes.ts';
import { createLoaders } from './loaders.ts';
import type { GraphQLContext, SchemaServices } from './schema.ts';
import { GraphQLRequest, GraphQLRequestError, GraphQLResponse } from './schemas.ts';

export const GRAPHQL_PATH = '/v1/graphql';

/** Where a Kiln route's permission and audit names come from: the REST routes, by operationId. */
type RouteTable = () => readonly Route[];

export interface GraphQLRouteDeps {
  services: SchemaServices;
  audit: AuditService;
  routes: RouteTable;
  log: Logger;
}

interface GraphQLAnswer {
  data?: unknown;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

/** A document that does not parse or validate, or a variable of the wrong type: Kiln's 400 code, GraphQL's own kept beside it. */
function asRequestError(error: NonNullable<GraphQLAnswer['errors']>[number]) {
  const { code, http: _http, ...extensions } = error.extensions ?? {};
  return { ...error, extensions: { ...extensions, code: 'INVALID_REQUEST', statusCode: 400, ...(typeof code === 'string' ? { graphqlCode: code } : {}) } };
}

export function graphqlRoutes(deps: GraphQLRouteDeps): Route[] {
  // GraphQL Yoga and the schema are built on the first query (control-plane/core/load-on-first-use.ts says why).
  const yoga = loadOnFirstUse(async () => (await import('./yoga.ts')).createKilnYoga({ services: deps.services, log: deps.log, endpoint: GRAPHQL_PATH }));

  let table: Map<string, Route> | undefined;
  const routeOf = (operationId: string): Route => {
    table ??= new Map(deps.routes().map((route) => [route.operationId, route]));
    const route = table.get(operationId);
    if (!route) throw new Error(`no route ${operationId}`);
    return route;
  };

  function contextFor(state: AppState, ip: string): GraphQLContext {
    const principal = state.principal!;
    return {
      principal,
      em: state.em,
      loaders: createLoaders(state.em, principal, deps.services.deployments),
      authorize(operationId) {
        const permission: Permission = routeOf(operationId).permission;
        if (!isAllowed(permission, principal.permissions, principal.scope, principal.platformAdmin)) {
          throw new ForbiddenError('Insufficient permissions', { permission });
        }
      },
      async audited(operationId, resourceId, run) {
        const route = routeOf(operationId);
        let statusCode: number = route.successStatus ?? 200;
        let answeredId = resourceId;
        try {
          const result = await run();
          const id = (result as { id?: unknown } | null)?.id;
          if (answeredId === undefined && typeof id === 'string') answeredId = id;
          return result;
        } catch (error) {
          statusCode = describeError(error).status;
          throw error;
        } finally {
          // The record the REST route's request writes (http/audit.ts), before the answer leaves.
          await deps.audit.record({
            organizationId: principal.organizationId, userId: principal.userId, apiKeyId: principal.apiKeyId ?? null,
            action: operationId, resourceType: route.resourceType, resourceId: answeredId ?? null,
            ipAddress: ip, statusCode, createdAt: new Date(), details: { via: 'graphql' },
          }).catch((error: unknown) => state.log.error({ err: error }, 'audit record failed'));
        }
      },
    };
  }

  return [
    defineRoute({
      tag: 'GraphQL', resourceType: 'graphql', method: 'POST', path: GRAPHQL_PATH, operationId: 'graphql',
      // Every role and key scope holds catalog:read; each field then asks for its own REST route's permission.
      permission: 'catalog:read',
      summary: 'One GraphQL schema over deployments (with their events, metrics and cost), models, templates, API keys, members and usage, '
        + 'and the main mutations, with the REST routes\' permissions and audit; a query deeper than 8 or costlier than 1000 is refused before it runs',
      body: GraphQLRequest, response: GraphQLResponse, raw: true, rawError: GraphQLRequestError,
      async handle({ body, state, ip }) {
        const response = await (await yoga()).fetch(`http://kiln${GRAPHQL_PATH}`, {
          method: 'POST',
          // GraphQL over HTTP's own media type: a document that does not parse or validate is answered 400.
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
          body: JSON.stringify(body),
        }, contextFor(state, ip));
        const result = await response.json() as GraphQLAnswer;
        // No `data` at all: the request was refused before anything ran (GraphQL over HTTP answers that 400).
        const refused = result.data === undefined;
        if (refused) result.errors = result.errors?.map(asRequestError);
        return {
          data: result, raw: true, status: refused ? 400 : response.status,
          auditDetails: body.operationName ? { operationName: body.operationName } : undefined,
        };
      },
    }),
  ];
}
