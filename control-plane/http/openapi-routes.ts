// GET /api/openapi.json and /v1/openapi: the generated document, built once at start-up.
import { z } from 'zod';
import { defineRoute, type Route } from './routes.ts';
import { buildOpenApiDocument } from './openapi.ts';

export function openApiRoutes(describedRoutes: () => readonly Route[]): Route[] {
  let document: unknown;
  const serve = (path: string, operationId: string) => defineRoute({
    method: 'GET', path, operationId, summary: 'This OpenAPI 3.1 document', tag: 'Meta', resourceType: 'openapi',
    response: z.record(z.string(), z.unknown()),
    handle: async () => ({ data: (document ??= buildOpenApiDocument(describedRoutes())), raw: true }),
  });
  return [serve('/api/openapi.json', 'openApiDocument'), serve('/v1/openapi', 'openApiDocumentV1')];
}
