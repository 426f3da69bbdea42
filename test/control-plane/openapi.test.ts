// The OpenAPI document: valid OpenAPI 3.1, served on both surfaces, listing every route that exists.
import test from 'ava';
import type Router from '@koa/router';
import { Validator } from '@seriousme/openapi-schema-validator';
import { routePermissions, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

test('the document is valid OpenAPI 3.1 and the same on both surfaces', async (t) => {
  const platform = await api.request('GET', '/api/openapi.json');
  t.is(platform.status, 200);
  t.is(platform.body.openapi, '3.1.0');
  const result = await new Validator().validate(platform.body);
  t.true(result.valid, JSON.stringify(result.errors));
  t.deepEqual((await api.request('GET', '/v1/openapi')).body, platform.body);
});

test('every declared route is documented, with its /api/v1 alias', async (t) => {
  const { paths } = (await api.request('GET', '/api/openapi.json')).body;
  const documented = Object.entries(paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
  const expected = Object.keys(routePermissions(api.app.routes)).flatMap((route) => route.includes(' /api/') ? [route, route.replace(' /api/', ' /api/v1/')] : [route]);
  t.deepEqual(documented.sort(), expected.sort());
});

test('every route the app registers is declared with its permission and documented, and each declared one is registered', async (t) => {
  const routers = api.app.middleware.flatMap((m) => (m as { router?: Router }).router ?? []);
  t.true(routers.length > 0);
  // HEAD is the router's automatic twin of GET; layers without methods are middleware, not routes.
  const registered = new Set(routers.flatMap((router) => router.stack.flatMap((layer) =>
    layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`))));
  const { paths } = (await api.request('GET', '/api/openapi.json')).body;
  const documented = new Set(Object.entries(paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)));
  const inTable = new Set(Object.keys(routePermissions(api.app.routes)).flatMap((route) => route.includes(' /api/') ? [route, route.replace(' /api/', ' /api/v1/')] : [route]));
  t.deepEqual([...registered].filter((r) => !inTable.has(r)), [], 'registered, not declared');
  t.deepEqual([...registered].filter((r) => !documented.has(r)), [], 'registered, missing from the OpenAPI document');
  t.deepEqual([...inTable].filter((r) => !registered.has(r)), [], 'declared, not registered');
});

test('every documented operation exists: none answers 404 Not found or 405', async (t) => {
  const { paths } = (await api.request('GET', '/api/openapi.json')).body;
  for (const [path, item] of Object.entries(paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) {
      const res = await api.request(method.toUpperCase(), path.replace('{id}', 'dep_unknown'));
      t.not(res.status, 405, `${method} ${path}`);
      const code = res.body?.code ?? res.body?.error?.code;
      t.not(code, 'NOT_FOUND', `${method} ${path}`);
    }
  }
});

test('request and response schemas come from the validating schemas', async (t) => {
  const doc = (await api.request('GET', '/api/openapi.json')).body;
  const create = doc.paths['/api/deployments'].post;
  t.truthy(create.requestBody.content['application/json'].schema);
  t.truthy(doc.components.schemas.CreateDeploymentRequest);
  t.deepEqual(doc.components.schemas.CreateDeploymentRequest.required.sort(), ['gpu', 'model', 'name', 'runtime']);
  t.truthy(create.responses['402']);
  const list = doc.paths['/api/deployments'].get;
  t.deepEqual(list.parameters.map((p: { name: string }) => p.name).sort(), ['created_after', 'created_before', 'cursor', 'limit', 'orgId', 'sort', 'status']);
  t.deepEqual(create.security, [{ bearer: [] }]);
  t.deepEqual(doc.paths['/v1/auth/signup'].post.security, []);
});

test('every operation documents what any request may answer: 422 with a body, 409 when idempotent, 431, and the document itself unwrapped', async (t) => {
  const doc = (await api.request('GET', '/api/openapi.json')).body;
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown>; parameters?: { name: string }[] }>>)) {
    for (const [method, op] of Object.entries(item)) {
      t.truthy(op.responses['431'], `${method} ${path}: 431`);
      if (op.requestBody) t.truthy(op.responses['422'], `${method} ${path}: 422`);
      if (op.parameters?.some((p) => p.name === 'Idempotency-Key')) t.truthy(op.responses['409'], `${method} ${path}: 409`);
    }
  }
  t.deepEqual(doc.paths['/api/openapi.json'].get.responses['200'].content['application/json'].schema.required, undefined);
  t.truthy(doc.paths['/v1/auth/signin'].post.responses['401']);
  t.truthy(doc.paths['/api/auth/refresh'].post.responses['401']);
});

test('a creation links to the operations on what it created, on its own surface, with the id where each takes it', async (t) => {
  const doc = (await api.request('GET', '/api/openapi.json')).body;
  const links = (path: string) => doc.paths[path].post.responses['201'].links as Record<string, { operationId: string; parameters?: Record<string, string>; requestBody?: Record<string, string> }>;
  t.deepEqual(Object.keys(links('/api/deployments')).sort(), ['deleteDeployment', 'getDeployment', 'replaceDeployment', 'updateDeployment']);
  t.deepEqual(links('/api/v1/deployments').getDeploymentApiV1!.parameters, { 'path.id': '$response.body#/data/id' });
  t.deepEqual(Object.keys(links('/v1/deployments')).sort(), ['applyDeploymentOptimizationV1', 'clearDeploymentFailure', 'deploymentActionV1', 'getDeploymentLogsV1', 'getDeploymentMetricsV1', 'getDeploymentOptimizationV1', 'getDeploymentPricingV1', 'inspectDeploymentRecovery', 'recoverDeployment', 'setDeploymentOptimizationPolicyV1', 'shareDeploymentAsTemplate']);
  // A template's creation links to what takes a template id; deploying one, to what takes the deployment's.
  t.deepEqual(Object.keys(links('/v1/templates/deploy')).sort(),
    ['createTemplateVersion', 'deleteTemplate', 'deployTemplate', 'getTemplateStar', 'listTemplateVersions', 'previewTemplateDeploy', 'starTemplate', 'unstarTemplate']);
  t.deepEqual(Object.keys(links('/v1/templates/{id}/deploy')).sort(), Object.keys(links('/v1/deployments')).sort());
  t.deepEqual(links('/v1/deployments').recoverDeployment!.parameters, { 'path.id': '$response.body#/id' });
  const apiKeys = links('/v1/settings/api-keys');
  t.deepEqual(apiKeys.revokeApiKey!.parameters, { 'query.id': '$response.body#/id' });
  t.deepEqual(apiKeys.updateApiKey!.requestBody, { id: '$response.body#/id' });
  t.deepEqual(Object.keys(links('/v1/team/invite')).sort(), ['revokeInvitation', 'updateInvitation']);
  // Every link names an operation the document has.
  const operationIds = new Set(Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((item) => Object.values(item).map((op) => op.operationId)));
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { links?: Record<string, { operationId: string }> }> }>>)) {
    for (const link of Object.values(item.post?.responses['201']?.links ?? {})) t.true(operationIds.has(link.operationId), `${path}: ${link.operationId}`);
  }
});
