// POST /v1/graphql: the request body (GraphQL over HTTP's JSON form) and the answer in GraphQL's own format.
import { z } from 'zod';

export const GraphQLRequest = z.object({
  query: z.string().max(100_000).meta({ description: 'The GraphQL document.', example: '{ deployments(limit: 5) { items { id name status } } }' }),
  variables: z.record(z.string(), z.unknown()).nullable().optional().meta({ description: 'Values of the document\'s variables.' }),
  operationName: z.string().max(200).nullable().optional().meta({ description: 'Which operation of the document to run, when it holds several.' }),
}).meta({ id: 'GraphQLRequest' });

/** One error in GraphQL's format; `extensions` carries Kiln's error code and the status the REST route would answer. */
const GraphQLErrorItem = z.object({
  message: z.string(),
  locations: z.array(z.object({ line: z.number().int(), column: z.number().int() })).optional(),
  path: z.array(z.union([z.string(), z.number().int()])).optional(),
  extensions: z.looseObject({
    code: z.string().meta({ example: 'NOT_FOUND' }),
    statusCode: z.number().int().optional().meta({ example: 404 }),
    details: z.record(z.string(), z.unknown()).optional(),
  }).optional(),
}).meta({ id: 'GraphQLError' });

export const GraphQLResponse = z.object({
  data: z.record(z.string(), z.unknown()).nullable().optional().meta({ description: 'What the operation selected; a field that failed is null and has an error.' }),
  errors: z.array(GraphQLErrorItem).optional(),
}).meta({ id: 'GraphQLResponse' });

/** A request refused before it ran (syntax, unknown field, wrong variable type, depth or cost over the limit). */
export const GraphQLRequestError = z.object({ errors: z.array(GraphQLErrorItem) }).meta({ id: 'GraphQLRequestError' });

export type GraphQLRequestInput = z.infer<typeof GraphQLRequest>;
