// POST /v1/graphql: GraphQL Yoga's fetch handler inside a Kiln route, so the request passes authentication,
// the rate limit, the audit trail and the organization's database scope as every REST route does. Yoga parses,
// validates (depth and cost limits included: a query over them is refused before any resolver runs) and
// executes; Kiln's errors reach the answer with their codes, anything else is masked.
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { GraphQLError } from 'graphql';
import { createYoga } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { AuditService } from '../audit/service.ts';
import { describeError, ForbiddenError } from '../core/errors.ts';
import { isAllowed, type Permission } from '../core/permissions.ts';
import type { AppState } from '../http/context.ts';
import { defineRoute, type Route } from '../http/routes.ts';
import { createLoaders } from './loaders.ts';
import { buildSchema, type GraphQLContext, type SchemaServices } from './schema.ts';
import { GraphQLRequest, GraphQLRequestError, GraphQLResponse } from './schemas.ts';

export const GRAPHQL_PATH = '/v1/graphql';
/** Deepest selection accepted: `deployments { items { events { payload } } }` is 4. */
export const MAX_DEPTH = 8;
/** graphql-armor's estimate (each object 2, each scalar 1, times a factor per level of depth). */
export const MAX_COST = 1000;

/** Where a Kiln route's permission and audit names come from: the REST routes, by operationId. */
type RouteTable = () => readonly Route[];

export interface GraphQLRouteDeps {
  services: SchemaServices;
  audit: AuditService;
  routes: RouteTable;
  log: Logger;
}

/** Kiln's code and the status its REST route would answer, in GraphQL's `extensions`; other failures masked. */
function maskError(log: Logger) {
  return (error: unknown, message: string): Error => {
    const graphqlError = error instanceof GraphQLError ? error : undefined;
    const original = graphqlError ? graphqlError.originalError : error;
    // The document's own errors (syntax, validation, a variable of the wrong type): the handler gives them Kiln's code.
    if (graphqlError && (!original || original instanceof GraphQLError)) return graphqlError;
    const described = describeError(original);
    if (described.status === 500) log.error({ err: original }, 'graphql resolver failed');
    return new GraphQLError(described.status === 500 ? message : described.message, {
      nodes: graphqlError?.nodes, source: graphqlError?.source, positions: graphqlError?.positions, path: graphqlError?.path,
      extensions: { code: described.code, statusCode: described.status, ...(Object.keys(described.details).length ? { details: described.details } : {}) },
    });
  };
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
  const yoga = createYoga<Omit<GraphQLContext, 'params' | 'request'>>({
    schema: buildSchema(deps.services),
    graphqlEndpoint: GRAPHQL_PATH,
    // No GraphiQL and no landing page: the route is POST alone, and the schema is documented in the README.
    graphiql: false,
    landingPage: false,
    logging: false,
    maskedErrors: { maskError: maskError(deps.log), errorMessage: 'Unexpected error' },
    plugins: [
      maxDepthPlugin({ n: MAX_DEPTH, flattenFragments: true }),
      costLimitPlugin({ maxCost: MAX_COST, flattenFragments: true }),
    ],
  });

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
        const response = await yoga.fetch(`http://kiln${GRAPHQL_PATH}`, {
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
