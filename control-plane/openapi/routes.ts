// GET /api/openapi.json and /v1/openapi: the generated document, built once at start-up.
import { z } from 'zod';
import { defineRoute, type Route } from '../http/routes.ts';
import { buildOpenApiDocument } from './document.ts';

export function openApiRoutes(describedRoutes: () => readonly Route[]): Route[] {
  let document: unknown;
  const serve = (path: string, operationId: string) => defineRoute({
    permission: 'public', method: 'GET', path, operationId, summary: 'This OpenAPI 3.1 document', tag: 'Meta', resourceType: 'openapi',
    response: z.record(z.string(), z.unknown()), raw: true,
    handle: async () => ({ data: (document ??= buildOpenApiDocument(describedRoutes())), raw: true }),
  });
  return [serve('/api/openapi.json', 'openApiDocument'), serve('/v1/openapi', 'openApiDocumentV1')];
}
