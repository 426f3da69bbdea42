// The document the API reference shows for one API surface, out of the OpenAPI document Kiln serves: the
// platform API (/api) or the reference API (/v1), as control-plane/http/surface.ts tells them apart.

export type Surface = 'platform' | 'reference';

interface Parameter {
  required?: boolean;
  description?: string;
  example?: unknown;
  schema?: { example?: unknown; description?: string };
}

export interface OpenApiDocument {
  paths?: Record<string, Record<string, unknown>>;
  [field: string]: unknown;
}

const isPlatform = (path: string) => path === '/api' || path.startsWith('/api/');
const isAlias = (path: string) => path.startsWith('/api/v1/');

/**
 * The surface's paths, each platform operation once (the document also lists its alias /api/v1/x). Swagger UI
 * fills every parameter's field with its example and "Execute" sends them all: an optional parameter's example
 * (a status filter, some organization's id) is said in its description instead, so a request sends only what
 * the reader typed.
 */
export function surfaceDocument(document: OpenApiDocument, surface: Surface): OpenApiDocument {
  const paths = Object.entries(document.paths ?? {})
    .filter(([path]) => (surface === 'platform' ? isPlatform(path) && !isAlias(path) : !isPlatform(path)))
    .map(([path, item]) => [path, Object.fromEntries(Object.entries(item).map(([method, operation]) => [method, unfilled(operation)]))]);
  return { ...document, paths: Object.fromEntries(paths) };
}

function unfilled(operation: unknown): unknown {
  const { parameters } = operation as { parameters?: Parameter[] };
  return Array.isArray(parameters) ? { ...operation as object, parameters: parameters.map(unfilledParameter) } : operation;
}

function unfilledParameter(parameter: Parameter): Parameter {
  const example = parameter.example ?? parameter.schema?.example;
  if (parameter.required || example === undefined) return parameter;
  const { example: _, schema, ...rest } = parameter;
  const { example: __, ...schemaWithout } = schema ?? {};
  return { ...rest, ...(schema ? { schema: schemaWithout } : {}), description: `${parameter.description ?? schema?.description ?? ''} Example: ${JSON.stringify(example)}`.trim() };
}
