// POST /v1/graphql: one schema over the REST routes' services, with their permissions, scopes and audit;
// batched loading, depth and cost limits, and errors in GraphQL's format with Kiln's codes.
import test from 'ava';
import { createStatusStore } from '../../workflows/deployment/status-store.ts';
import { startPrometheusStandIn, type PrometheusStandIn } from '../support/prometheus-standin.ts';
import { addMember, createApiKey, signup, signupWithDeployment, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
let prometheus: PrometheusStandIn;
test.before(async () => {
  prometheus = await startPrometheusStandIn(() => []);
  api = await startTestApi(import.meta.filename, { config: { prometheusUrl: prometheus.url } });
});
test.after.always(async () => {
  await api?.close();
  await prometheus?.close();
});

type GraphQLError = { message: string; path?: Array<string | number>; extensions: { code: string; statusCode?: number; [key: string]: unknown } };

const gql = (token: string | undefined, query: string, variables?: Record<string, unknown>) =>
  api.request('POST', '/v1/graphql', { token, body: { query, ...(variables ? { variables } : {}) } });

const errorsOf = (body: { errors?: GraphQLError[] }) => body.errors ?? [];

async function deploymentCount(organizationId: string): Promise<number> {
  const { rows } = await api.pool.query<{ n: string }>('SELECT count(*) AS n FROM deployment WHERE organization_id = $1 AND deleted_at IS NULL', [organizationId]);
  return Number(rows[0]!.n);
}

async function createDeployment(token: string, name: string): Promise<string> {
  const res = await api.request('POST', '/v1/deployments', { token, body: validDeployment(name) });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

const running = (deploymentId: string) => createStatusStore(api.orm).record({ deploymentId, status: 'running', event: 'deployment.running', generation: 1, replicas: 1 });

const CREATE = 'mutation($input: CreateDeploymentInput!) { createDeployment(input: $input) { id name status replicas } }';

// Serial tests run before the others: no other test's statements are counted here.
test.serial('the events of a whole page load in one statement, for one deployment as for ten', async (t) => {
  const connection = api.orm.em.getConnection();
  const execute = connection.execute.bind(connection);
  let eventStatements = 0;
  connection.execute = ((query: unknown, ...rest: unknown[]) => {
    if (String(query).includes('deployment_event')) eventStatements += 1;
    return (execute as (...args: unknown[]) => unknown)(query, ...rest);
  }) as typeof connection.execute;
  t.teardown(() => { connection.execute = execute; });

  const statementsFor = async (deployments: number) => {
    const owner = await signup(api, 'batch');
    for (let i = 0; i < deployments; i += 1) await running(await createDeployment(owner.token, `batch-${i}`));
    eventStatements = 0;
    const res = await gql(owner.token, '{ deployments(limit: 20) { items { id events { type deployment { id } } } } }');
    t.is(res.status, 200);
    t.deepEqual(errorsOf(res.body), []);
    const items = res.body.data.deployments.items as Array<{ id: string; events: Array<{ type: string; deployment: { id: string } }> }>;
    t.is(items.length, deployments);
    for (const item of items) t.deepEqual(item.events.map((e) => [e.type, e.deployment.id]), [['deployment.running', item.id]]);
    return eventStatements;
  };
  t.is(await statementsFor(1), 1);
  t.is(await statementsFor(10), 1);
});

test('one query reads deployments with their events, metrics and cost, models, templates, API keys, members and usage', async (t) => {
  const owner = await signup(api, 'reader');
  const first = await createDeployment(owner.token, 'first');
  const second = await createDeployment(owner.token, 'second');
  await running(first);
  const key = await createApiKey(api, owner.token, 'read_only');
  const res = await gql(owner.token, `{
    deployments { hasMore nextCursor items { id name status events { type generation } cost metrics } }
    deployment(id: "${first}") { id status events { type } }
    models(limit: 2) { items { id displayName source } hasMore }
    templates(limit: 3) { items { id name configuration } }
    apiKeys { id name scope prefix }
    members { userId email role }
    usage { periodStart periodEnd totalCents balanceCents deployments { deploymentId gpu } }
  }`);
  t.is(res.status, 200);
  t.deepEqual(errorsOf(res.body), []);
  const data = res.body.data;
  const items = data.deployments.items as Array<{ id: string; status: string; events: Array<{ type: string }>; cost: { deploymentId: string }; metrics: unknown }>;
  t.deepEqual(items.map((d) => d.id).sort(), [first, second].sort());
  t.deepEqual(items.find((d) => d.id === first)!.events.map((e) => e.type), ['deployment.running']);
  t.deepEqual(items.find((d) => d.id === second)!.events, []);
  t.is(items.find((d) => d.id === first)!.cost.deploymentId, first);
  t.truthy(items[0]!.metrics);
  t.is(data.deployments.hasMore, false);
  t.deepEqual(data.deployment, { id: first, status: 'running', events: [{ type: 'deployment.running' }] });
  t.is(data.models.items.length, 2);
  t.true(data.templates.items.length > 0);
  t.deepEqual(data.apiKeys.map((k: { id: string }) => k.id), [key.id]);
  t.false(JSON.stringify(data.apiKeys).includes(key.key));
  t.deepEqual(data.members.map((m: { email: string; role: string }) => [m.email, m.role]), [[owner.email, 'owner']]);
  t.is(typeof data.usage.totalCents, 'number');
  t.true(data.usage.periodStart < data.usage.periodEnd);

  // The same figures the REST routes answer.
  const rest = await api.request('GET', '/api/billing/usage', { token: owner.token });
  t.is(rest.body.data.balanceCents, data.usage.balanceCents);
});

test('mutations create, scale and delete a deployment and create and revoke a key, each audited as its REST route', async (t) => {
  const owner = await signup(api, 'writer');
  const created = await gql(owner.token, CREATE, { input: { name: 'from-graphql', model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4' } });
  t.is(created.status, 200);
  t.deepEqual(errorsOf(created.body), []);
  const id = created.body.data.createDeployment.id as string;
  t.is(created.body.data.createDeployment.status, 'pending');
  t.is((await api.request('GET', `/api/deployments/${id}`, { token: owner.token })).body.data.name, 'from-graphql');

  const scaled = await gql(owner.token, 'mutation($id: ID!) { updateDeployment(id: $id, input: { replicas: 2, maxReplicas: 3 }) { id replicas maxReplicas } }', { id });
  t.deepEqual(scaled.body, { data: { updateDeployment: { id, replicas: 2, maxReplicas: 3 } } });

  const key = await gql(owner.token, 'mutation { createApiKey(input: { name: "ci", scope: "read_only" }) { key apiKey { id name scope } } }');
  t.deepEqual(errorsOf(key.body), []);
  const { key: value, apiKey } = key.body.data.createApiKey as { key: string; apiKey: { id: string; scope: string } };
  t.regex(value, /^sk_(live|test)_/);
  t.is(apiKey.scope, 'read_only');
  t.is((await gql(value, '{ apiKeys { id } }')).status, 200);

  const revoked = await gql(owner.token, 'mutation($id: ID!) { revokeApiKey(id: $id) { id revoked } }', { id: apiKey.id });
  t.deepEqual(revoked.body, { data: { revokeApiKey: { id: apiKey.id, revoked: true } } });
  t.is((await gql(value, '{ apiKeys { id } }')).status, 401);

  const deleted = await gql(owner.token, 'mutation($id: ID!) { deleteDeployment(id: $id) { id status } }', { id });
  t.deepEqual(deleted.body, { data: { deleteDeployment: { id, status: 'deleting' } } });

  // A REST creation, to compare its record with GraphQL's.
  const restId = (await api.request('POST', '/api/deployments', { token: owner.token, body: validDeployment('from-rest') })).body.data.id as string;
  const { rows } = await api.pool.query<{ action: string; resource_type: string; resource_id: string; status_code: number; user_id: string; details: unknown }>(
    `SELECT action, resource_type, resource_id, status_code, user_id, details FROM audit_log
      WHERE organization_id = $1 AND action IN ('createDeployment', 'updateDeployment', 'deleteDeployment', 'createApiKey', 'revokeApiKey', 'graphql') ORDER BY created_at, id`,
    [owner.organizationId]);
  const records = rows.map((r) => [r.action, r.resource_type, r.resource_id, r.status_code]);
  for (const expected of [
    ['createDeployment', 'deployment', id, 201],
    ['updateDeployment', 'deployment', id, 200],
    ['createApiKey', 'api_key', apiKey.id, 201],
    ['revokeApiKey', 'api_key', apiKey.id, 200],
    ['deleteDeployment', 'deployment', id, 200],
    ['createDeployment', 'deployment', restId, 201],
  ]) t.true(records.some((r) => JSON.stringify(r) === JSON.stringify(expected)), JSON.stringify(expected));
  t.true(rows.every((r) => r.user_id === owner.userId));
  t.deepEqual(rows.find((r) => r.resource_id === id && r.action === 'createDeployment')!.details, { via: 'graphql' });
  // The request itself is recorded too, as every mutation request is.
  t.true(rows.filter((r) => r.action === 'graphql').length >= 5);
});

test('a mutation that breaks a rule answers the REST route\'s code, audited as refused, and changes nothing', async (t) => {
  const owner = await signup(api, 'rules');
  const res = await gql(owner.token, CREATE, { input: { name: 'Not A Valid Name!', model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4' } });
  t.is(res.status, 200);
  t.is(res.body.data.createDeployment, null);
  const [error] = errorsOf(res.body);
  t.is(error!.extensions.code, 'VALIDATION_ERROR');
  t.is(error!.extensions.statusCode, 422);
  t.deepEqual(error!.path, ['createDeployment']);
  t.is(await deploymentCount(owner.organizationId), 0);
  const { rows } = await api.pool.query<{ status_code: number; resource_id: string | null }>(
    'SELECT status_code, resource_id FROM audit_log WHERE organization_id = $1 AND action = $2', [owner.organizationId, 'createDeployment']);
  t.deepEqual(rows, [{ status_code: 422, resource_id: null }]);
});

test('a document that does not parse or validate, or a variable of the wrong type, is 400 in GraphQL\'s format and runs nothing', async (t) => {
  const owner = await signup(api, 'malformed');
  const input = { name: 'never', model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4' };
  for (const [query, variables] of [
    ['mutation { createDeployment(input: { name: "never" ', undefined],
    ['{ deployments { items { id secretField } } }', undefined],
    ['mutation { createDeployment(input: { name: "never", model: "m", gpu: "nvidia-l4", bogus: 1 }) { id } }', undefined],
    [CREATE, { input: { ...input, replicas: 'two' } }],
    [CREATE, {}],
  ] as const) {
    const res = await gql(owner.token, query, variables);
    t.is(res.status, 400, query);
    t.false('data' in res.body);
    const errors = errorsOf(res.body);
    t.true(errors.length > 0);
    for (const error of errors) {
      t.is(error.extensions.code, 'INVALID_REQUEST');
      t.is(error.extensions.statusCode, 400);
      t.is(typeof error.message, 'string');
    }
  }
  t.is(await deploymentCount(owner.organizationId), 0);
  // The body itself: Kiln's own 400 before GraphQL sees it.
  const noQuery = await api.request('POST', '/v1/graphql', { token: owner.token, body: { variables: {} } });
  t.is(noQuery.status, 400);
  t.is(noQuery.body.code, 'INVALID_REQUEST');
  // Introspection answers, so tools can read the schema.
  const schema = await gql(owner.token, '{ __schema { queryType { name } mutationType { name } } }');
  t.deepEqual(schema.body, { data: { __schema: { queryType: { name: 'Query' }, mutationType: { name: 'Mutation' } } } });
  // POST is the only way in.
  t.is((await api.request('GET', '/v1/graphql?query=%7BapiKeys%7Bid%7D%7D', { token: owner.token })).status, 405);
});

test('no credential, or an invalid one, is 401', async (t) => {
  for (const token of [undefined, 'sk_test_00000000000000000000000000000000']) {
    const res = await gql(token, '{ apiKeys { id } }');
    t.is(res.status, 401);
    t.is(res.body.code, 'INVALID_API_KEY');
  }
});

test('a read-only key may query but not mutate, a key without billing:read sees no usage, a viewer cannot write', async (t) => {
  const owner = await signupWithDeployment(api);
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  const query = await gql(readOnly.key, '{ deployments { items { id } } apiKeys { id } usage { totalCents } }');
  t.is(query.status, 200);
  t.deepEqual(query.body.data.deployments.items, [{ id: owner.id }]);
  t.true(query.body.data.apiKeys.length > 0);
  t.is(query.body.data.usage, null);
  const [usageError] = errorsOf(query.body);
  t.deepEqual(usageError!.path, ['usage']);
  t.is(usageError!.extensions.code, 'INSUFFICIENT_PERMISSIONS');
  t.is(usageError!.extensions.statusCode, 403);

  for (const mutation of [
    `mutation { deleteDeployment(id: "${owner.id}") { id } }`,
    'mutation { createApiKey(input: { name: "x", scope: "full_access" }) { key } }',
  ]) {
    const res = await gql(readOnly.key, mutation);
    t.is(res.status, 200);
    t.is(errorsOf(res.body)[0]!.extensions.code, 'INSUFFICIENT_PERMISSIONS');
  }
  const refused = await gql(readOnly.key, CREATE, { input: { name: 'nope', model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4' } });
  t.is(errorsOf(refused.body)[0]!.extensions.statusCode, 403);
  t.is(await deploymentCount(owner.organizationId), 1);
  // Refused as its REST route is, and recorded as such.
  const { rows } = await api.pool.query<{ action: string; status_code: number }>(
    `SELECT action, status_code FROM audit_log WHERE api_key_id = $1 AND action <> 'graphql' ORDER BY action`, [readOnly.id]);
  t.deepEqual(rows.map((r) => [r.action, r.status_code]), [['createApiKey', 403], ['createDeployment', 403], ['deleteDeployment', 403]]);
  t.is((await api.request('GET', `/api/deployments/${owner.id}`, { token: owner.token })).body.data.status, 'pending');

  // A deployments-only key deploys but does not see the organization's keys.
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  const keys = await gql(deploymentsOnly.key, '{ apiKeys { id } deployments { items { id } } }');
  t.is(errorsOf(keys.body)[0]!.extensions.code, 'INSUFFICIENT_PERMISSIONS');
  t.is(keys.body.data.deployments.items.length, 1);

  // A viewer reads deployments but may not change them.
  const viewer = await addMember(api, owner.organizationId, 'viewer');
  const asViewer = (query: string) => api.request('POST', '/v1/graphql', { ...viewer.as, body: { query } });
  t.deepEqual((await asViewer('{ deployments { items { id } } }')).body.data.deployments.items, [{ id: owner.id }]);
  t.is(errorsOf((await asViewer(`mutation { deleteDeployment(id: "${owner.id}") { id } }`)).body)[0]!.extensions.code, 'INSUFFICIENT_PERMISSIONS');
});

test('another organization\'s deployments and keys are not found, and nothing of them shows', async (t) => {
  const other = await signupWithDeployment(api);
  const otherKey = await createApiKey(api, other.token, 'read_only');
  const me = await signupWithDeployment(api);
  const read = await gql(me.token, `{ deployment(id: "${other.id}") { id name } deployments { items { id } } apiKeys { id } }`);
  t.is(read.status, 200);
  t.is(read.body.data.deployment, null);
  t.is(errorsOf(read.body)[0]!.extensions.statusCode, 404);
  t.deepEqual(read.body.data.deployments.items, [{ id: me.id }]);
  t.false(JSON.stringify(read.body).includes(otherKey.id));

  for (const mutation of [
    `mutation { deleteDeployment(id: "${other.id}") { id } }`,
    `mutation { updateDeployment(id: "${other.id}", input: { replicas: 3 }) { id } }`,
    `mutation { revokeApiKey(id: "${otherKey.id}") { id } }`,
  ]) {
    const res = await gql(me.token, mutation);
    t.is(errorsOf(res.body)[0]!.extensions.statusCode, 404, mutation);
  }
  const theirs = await api.request('GET', `/api/deployments/${other.id}`, { token: other.token });
  t.is(theirs.body.data.status, 'pending');
  t.is(theirs.body.data.replicas, 1);
  t.is((await gql(otherKey.key, '{ apiKeys { id } }')).status, 200);
});

test('a query over the depth or cost limit is refused before anything runs', async (t) => {
  const owner = await signup(api, 'limits');
  const input = '{ name: "too-deep", model: "meta-llama/Llama-3.1-8B-Instruct", gpu: "nvidia-l4" }';
  const deep = await gql(owner.token, `mutation { createDeployment(input: ${input}) { events { deployment { events { deployment { events { deployment { events { id } } } } } } } } }`);
  t.is(deep.status, 400);
  t.regex(errorsOf(deep.body)[0]!.message, /depth/i);
  t.is(errorsOf(deep.body)[0]!.extensions.code, 'INVALID_REQUEST');

  const many = Array.from({ length: 200 }, (_, i) => `d${i}: createDeployment(input: { name: "costly-${i}", model: "meta-llama/Llama-3.1-8B-Instruct", gpu: "nvidia-l4" }) { id name status events { type } }`);
  const costly = await gql(owner.token, `mutation { ${many.join(' ')} }`);
  t.is(costly.status, 400);
  t.regex(errorsOf(costly.body)[0]!.message, /cost/i);
  t.is(await deploymentCount(owner.organizationId), 0);

  // Within both limits, the same shapes run.
  const shallow = await gql(owner.token, `mutation { createDeployment(input: ${input}) { id events { deployment { id } } } }`);
  t.deepEqual(errorsOf(shallow.body), []);
  t.is(await deploymentCount(owner.organizationId), 1);
});
