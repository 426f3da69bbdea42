// GraphQL Yoga over Kiln's schema: it parses, validates (depth and cost limits included: a query over them is
// refused before any resolver runs) and executes; Kiln's errors reach the answer with their codes, anything
// else is masked. routes.ts loads this module on the first query.
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { GraphQLError } from 'graphql';
import { createYoga } from 'graphql-yoga';
import type { Logger } from 'pino';
import { describeError } from '../core/errors.ts';
import { buildSchema, type GraphQLContext, type SchemaServices } from './schema.ts';

/** Deepest selection accepted: `deployments { items { events { payload } } }` is 4. */
const MAX_DEPTH = 8;
/** graphql-armor's estimate (each object 2, each scalar 1, times a factor per level of depth). */
const MAX_COST = 1000;

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

export function createKilnYoga(options: { services: SchemaServices; log: Logger; endpoint: string }) {
  return createYoga<Omit<GraphQLContext, 'params' | 'request'>>({
    schema: buildSchema(options.services),
    graphqlEndpoint: options.endpoint,
    // No GraphiQL and no landing page: the route is POST alone, and the schema is documented in docs/guides/graphql.md.
    graphiql: false,
    landingPage: false,
    logging: false,
    maskedErrors: { maskError: maskError(options.log), errorMessage: 'Unexpected error' },
    plugins: [
      maxDepthPlugin({ n: MAX_DEPTH, flattenFragments: true }),
      costLimitPlugin({ maxCost: MAX_COST, flattenFragments: true }),
    ],
  });
}
