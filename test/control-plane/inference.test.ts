// POST /v1/inference and /v1/inference/test, served by Kiln's inference gateway (gateway/, as `npm run gateway`
// runs it beside the API on the API's database): requests reach a deployment's model server, found through
// its cluster's API (a real local cluster here) and connected to by the gateway itself. The model servers are
// stand-ins (test/support/model-pods.ts) on loopback addresses that Pod objects of the cluster name as their IPs.
// The API serves the same routes through its own middleware: one test here sends them there.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { createReplicaDirectory } from '../../control-plane/inference/replicas.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { signupAdmin } from '../support/admin.ts';
import { addMember, createApiKey, signup, startTestApi, startTestGateway, type TestApi, type TestGateway, validDeployment } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';
import { type Answer, createModelPods, MODEL_PORT, silent, USAGE, vllmAnswer } from '../support/model-pods.ts';

let api: TestApi;
let gateway: TestGateway;
let gpuCluster: GpuCluster;
let admin: string;
let kubeconfig: string;
const { nextAddress, startFakeModelServer, podOf, unreadyPodOf, markReady, closeAll } = createModelPods(() => gpuCluster, 1);

/**
 * The silence the gateway allows here before answering 504: short, so the timeout test is quick, yet long enough
 * that a request the balancing test holds open is not cut off while a loaded machine runs its next steps.
 */
const SILENCE_MS = 5000;
const RETRY_AFTER_SECONDS = 2;
/** How long a request for a deployment waking from zero is held here before its 503. */
const WAKE_TIMEOUT_MS = 8000;
const INFERENCE_OPTIONS = { silenceTimeoutMs: SILENCE_MS, retryAfterSeconds: RETRY_AFTER_SECONDS, wakeTimeoutMs: WAKE_TIMEOUT_MS };

test.before(async () => {
  [api, gpuCluster] = await Promise.all([
    startTestApi(import.meta.filename, { defaultCluster: false, inference: INFERENCE_OPTIONS }),
    startTestGpuCluster(),
  ]);
  gateway = await startTestGateway(api, { inference: INFERENCE_OPTIONS });
  kubeconfig = await readFile(gpuCluster.kubeconfig, 'utf8');
  admin = (await signupAdmin(api)).token;
  const registered = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'kubernetes', name: 'local', kubeconfig } });
  if (registered.status !== 201) throw new Error(`cluster registration failed: ${JSON.stringify(registered.body)}`);
});
test.after.always(async () => {
  await gateway?.close();
  await api?.close();
  await gpuCluster?.stop();
  await closeAll();
});

// ---- Deployments and their pods ----

/** A new organization with a deployment of `status` (running unless told otherwise), placed on the local cluster. */
async function deploymentOf(status = 'running', name = 'chat', fields: Record<string, unknown> = {}) {
  const owner = await signup(api);
  const created = await api.request('POST', '/v1/deployments', { token: owner.token, body: { ...validDeployment(name), ...fields } });
  if (created.status !== 201) throw new Error(`deployment creation failed: ${JSON.stringify(created.body)}`);
  await api.pool.query(`UPDATE deployment SET status = $2 WHERE id = $1`, [created.body.id, status]);
  return { ...owner, id: created.body.id as string, name };
}

const chat = (deployment: string, extra: Record<string, unknown> = {}) => ({ deployment, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8, ...extra });
const infer = (token: string | undefined, body: unknown) => gateway.request('POST', '/v1/inference', { token, body });
const probe = (token: string | undefined, body: unknown) => gateway.request('POST', '/v1/inference/test', { token, body });

async function auditDetails(deploymentId: string, action: string) {
  return eventually(`the ${action} audit record of ${deploymentId}`, async () => {
    const { rows } = await api.pool.query(`SELECT status_code, details FROM audit_log WHERE resource_id = $1 AND action = $2 ORDER BY created_at`, [deploymentId, action]);
    return rows.length ? rows : undefined;
  }, 10_000);
}

/** Sends an inference request and reads its streamed answer chunk by chunk. */
async function streamOf(body: { token: string; request: unknown }) {
  const controller = new AbortController();
  const res = await fetch(`${gateway.url}/v1/inference`, {
    method: 'POST', headers: { authorization: `Bearer ${body.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body.request), signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  return {
    res,
    async next(): Promise<string | undefined> {
      const { value, done } = await reader.read();
      return done ? undefined : decoder.decode(value, { stream: true });
    },
    async rest(): Promise<string> {
      let text = '';
      for (let chunk = await this.next(); chunk !== undefined; chunk = await this.next()) text += chunk;
      return text;
    },
    /** The client goes away: its connection is dropped. */
    abort: () => controller.abort(),
  };
}

// ---- Success ----

test('a chat completion is answered as the model server answers it, the model defaulting to the deployment\'s; tokens are audited', async (t) => {
  const deployment = await deploymentOf();
  const server = await startFakeModelServer(nextAddress());
  const pod = await podOf(deployment, server.address);
  const res = await infer(deployment.token, chat(deployment.id, { temperature: 0.2, top_k: 5 }));
  t.is(res.status, 200, JSON.stringify(res.body));
  t.regex(res.headers.get('content-type')!, /^application\/json/);
  t.is(res.headers.get('x-kiln-replica'), pod);
  t.like(res.body, { object: 'chat.completion', model: 'meta-llama/Llama-3.1-8B-Instruct', choices: [{ message: { content: 'Hello there' } }], usage: USAGE });

  const sent = server.received[0]!;
  t.is(sent.path, '/v1/chat/completions');
  t.deepEqual(sent.body, { model: 'meta-llama/Llama-3.1-8B-Instruct', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8, temperature: 0.2, top_k: 5 },
    'the deployment field is Kiln\'s; everything else is passed on');
  const [record] = await auditDetails(deployment.id, 'inferV1');
  t.is(record.status_code, 200);
  t.like(record.details, { promptTokens: 7, completionTokens: 3, stream: false, completed: true, replica: pod });
});

test('the API serves the same routes: a request sent to it is answered, relayed and audited as through the gateway', async (t) => {
  const deployment = await deploymentOf();
  const server = await startFakeModelServer(nextAddress());
  const pod = await podOf(deployment, server.address);
  const res = await api.request('POST', '/v1/inference', { token: deployment.token, body: chat(deployment.id) });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.headers.get('x-kiln-replica'), pod);
  t.like(res.body, { object: 'chat.completion', usage: USAGE });
  const probed = await api.request('POST', '/v1/inference/test', { token: deployment.token, body: { deployment: deployment.name } });
  t.is(probed.status, 200, JSON.stringify(probed.body));
  t.like(probed.body, { deploymentId: deployment.id, replica: pod, output: 'Hello there' });
  t.is((await auditDetails(deployment.id, 'inferV1')).length, 1);
});

test('a completion (prompt) by deployment name goes to /v1/completions with the model given', async (t) => {
  const deployment = await deploymentOf('running', 'completer');
  const server = await startFakeModelServer(nextAddress());
  await podOf(deployment, server.address);
  const res = await infer(deployment.token, { deployment: 'completer', model: 'my-lora', prompt: 'Once upon', max_tokens: 4 });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { object: 'text_completion', model: 'my-lora', choices: [{ text: 'Hello there' }] });
  t.is(server.received[0]!.path, '/v1/completions');
});

test('a stream is relayed chunk by chunk: the first chunk reaches the client while the model server is still generating', async (t) => {
  const deployment = await deploymentOf();
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  const server = await startFakeModelServer(nextAddress(), vllmAnswer({ afterFirstChunk: () => held }));
  await podOf(deployment, server.address);
  const stream = await streamOf({ token: deployment.token, request: chat(deployment.id, { stream: true }) });
  t.is(stream.res.status, 200);
  t.regex(stream.res.headers.get('content-type')!, /^text\/event-stream/);
  t.is(stream.res.headers.get('cache-control'), 'no-cache');
  const first = await stream.next();
  t.regex(first!, /"content":"Hel"/, 'the first chunk arrives while the rest is held back upstream');
  t.is(server.open(), 1, 'the model server has not finished');
  release();
  const rest = await stream.rest();
  const events = (first + rest).split('\n\n').filter(Boolean);
  t.deepEqual(events.map((e) => (e.includes('[DONE]') ? 'done' : JSON.parse(e.slice('data: '.length)).choices[0]?.delta.content)), ['Hel', 'lo', ' there', 'done'],
    'the usage chunk Kiln asked for is not shown to a client that did not ask for it');
  t.deepEqual(server.received[0]!.body.stream_options, { include_usage: true });
  const [record] = await auditDetails(deployment.id, 'inferV1');
  t.like(record.details, { promptTokens: 7, completionTokens: 3, stream: true, completed: true });
});

test('a client asking for usage in its stream gets the usage chunk', async (t) => {
  const deployment = await deploymentOf();
  const server = await startFakeModelServer(nextAddress());
  await podOf(deployment, server.address);
  const stream = await streamOf({ token: deployment.token, request: chat(deployment.id, { stream: true, stream_options: { include_usage: true } }) });
  const events = (await stream.rest()).split('\n\n').filter(Boolean);
  t.is(events.length, 5);
  t.deepEqual(JSON.parse(events[3]!.slice('data: '.length)).usage, USAGE);
});

test('a client that goes away cancels the model server\'s request; the record says the answer was cut off', async (t) => {
  const deployment = await deploymentOf();
  const server = await startFakeModelServer(nextAddress(), vllmAnswer({ afterFirstChunk: () => new Promise(() => {}) }));
  await podOf(deployment, server.address);
  const stream = await streamOf({ token: deployment.token, request: chat(deployment.id, { stream: true }) });
  t.regex((await stream.next())!, /Hel/);
  stream.abort();
  await Promise.race([server.received[0]!.closed, sleep(5000).then(() => { throw new Error('the model server\'s request stayed open'); })]);
  t.is(server.open(), 0);
  const [record] = await auditDetails(deployment.id, 'inferV1');
  t.like(record.details, { stream: true, completed: false, promptTokens: null });
});

/** Holds each request until release() (then answers as vLLM does). */
function holding() {
  const waiting: Array<() => void> = [];
  const answer: Answer = (received, res) => new Promise<void>((resolve) => waiting.push(resolve)).then(() => vllmAnswer()(received, res));
  return { answer, release: () => waiting.splice(0).forEach((go) => go()) };
}

test('requests go to the replica with the fewest in flight', async (t) => {
  const deployment = await deploymentOf();
  const gates = [holding(), holding()];
  const servers = await Promise.all(gates.map((gate) => startFakeModelServer(nextAddress(), gate.answer)));
  for (const server of servers) await podOf(deployment, server.address);
  const answers = [infer(deployment.token, chat(deployment.id))];
  await eventually('the first request upstream', () => servers.some((s) => s.received.length === 1));
  const first = servers.findIndex((s) => s.received.length === 1);
  const other = 1 - first;
  answers.push(infer(deployment.token, chat(deployment.id)));
  await eventually('the second request at the idle replica', () => servers[other]!.received.length === 1);
  t.is(servers[first]!.received.length, 1);

  // The second replica finishes its request: the third goes there again, where taking turns would not.
  gates[other]!.release();
  t.is((await answers[1])!.status, 200);
  answers.push(infer(deployment.token, chat(deployment.id)));
  await eventually('the third request upstream', () => servers[0]!.received.length + servers[1]!.received.length === 3);
  t.deepEqual([servers[first]!.received.length, servers[other]!.received.length], [1, 2]);
  gates.forEach((gate) => gate.release());
  const statuses = (await Promise.all(answers)).map((res) => res.status);
  t.deepEqual(statuses, [200, 200, 200]);
});

test('a replica refusing connections is skipped for the next one', async (t) => {
  const deployment = await deploymentOf();
  const working = await startFakeModelServer(nextAddress());
  await podOf(deployment, nextAddress()); // Ready, but nothing listens at its address
  const good = await podOf(deployment, working.address);
  for (let i = 0; i < 4; i++) {
    const res = await infer(deployment.token, chat(deployment.id));
    t.is(res.status, 200, JSON.stringify(res.body));
    t.is(res.headers.get('x-kiln-replica'), good);
  }
  t.is(working.received.length, 4);
});

test('/v1/inference/test probes a deployment: latency, time to first token, tokens and the model its server reports', async (t) => {
  const deployment = await deploymentOf();
  const server = await startFakeModelServer(nextAddress(), vllmAnswer({ afterFirstChunk: () => sleep(150) }));
  const pod = await podOf(deployment, server.address);
  const res = await probe(deployment.token, { deployment: deployment.name });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, {
    deploymentId: deployment.id, model: 'meta-llama/Llama-3.1-8B-Instruct', replica: pod, tokens: { prompt: 7, completion: 3 }, output: 'Hello there',
  });
  t.true(res.body.timeToFirstTokenMs >= 0 && res.body.timeToFirstTokenMs < res.body.latencyMs, JSON.stringify(res.body));
  t.true(res.body.latencyMs >= 150);
  t.like(server.received[0]!, { path: '/v1/completions', body: { prompt: 'Say hello.', max_tokens: 16, stream: true, stream_options: { include_usage: true } } });
  const [record] = await auditDetails(deployment.id, 'testInferenceV1');
  t.like(record.details, { promptTokens: 7, completionTokens: 3, completed: true });
});

// ---- Errors, on both endpoints ----

const ENDPOINTS = [
  { name: 'inference', path: '/v1/inference', send: infer, body: (deployment: string) => chat(deployment) },
  { name: 'inference test', path: '/v1/inference/test', send: probe, body: (deployment: string) => ({ deployment }) },
] as const;

for (const endpoint of ENDPOINTS) {
  test(`${endpoint.name}: a bad body is 400 naming the field`, async (t) => {
    const deployment = await deploymentOf();
    const missing = await endpoint.send(deployment.token, {});
    t.is(missing.status, 400);
    t.like(missing.body, { code: 'INVALID_REQUEST', statusCode: 400 });
    t.regex(missing.body.message, /deployment/);
    const wrongType = await endpoint.send(deployment.token, { ...endpoint.body(deployment.id), deployment: 42 });
    t.is(wrongType.status, 400);
    t.regex(wrongType.body.message, /^Invalid field deployment/);
    const notJson = await endpoint.send(deployment.token, '{"deployment":');
    t.like(notJson.body, { statusCode: 400, code: 'INVALID_JSON' });
  });

  test(`${endpoint.name}: no credential is 401, a read-only key or a viewer 403; a deployments-only key or a member may`, async (t) => {
    const deployment = await deploymentOf();
    const server = await startFakeModelServer(nextAddress());
    await podOf(deployment, server.address);
    t.like((await endpoint.send(undefined, endpoint.body(deployment.id))).body, { statusCode: 401, code: 'INVALID_API_KEY' });
    const readOnly = await createApiKey(api, deployment.token, 'read_only');
    t.like((await endpoint.send(readOnly.key, endpoint.body(deployment.id))).body, { statusCode: 403, code: 'INSUFFICIENT_PERMISSIONS' });
    const viewer = await addMember(api, deployment.organizationId, 'viewer');
    t.is((await gateway.request('POST', endpoint.path, { ...viewer.as, body: endpoint.body(deployment.id) })).status, 403);
    const deploymentsOnly = await createApiKey(api, deployment.token, 'deployments_only');
    t.is((await endpoint.send(deploymentsOnly.key, endpoint.body(deployment.id))).status, 200);
    const member = await addMember(api, deployment.organizationId, 'member');
    t.is((await gateway.request('POST', endpoint.path, { ...member.as, body: endpoint.body(deployment.id) })).status, 200);
  });

  test(`${endpoint.name}: an unknown deployment, or another organization's, is 404`, async (t) => {
    const deployment = await deploymentOf();
    const other = await signup(api, 'other');
    for (const reference of [deployment.id, deployment.name]) {
      const res = await endpoint.send(other.token, endpoint.body(reference));
      t.is(res.status, 404);
      t.like(res.body, { code: 'DEPLOYMENT_NOT_FOUND' });
    }
    t.is((await endpoint.send(deployment.token, endpoint.body('dep_unknown'))).status, 404);
  });

  test(`${endpoint.name}: a deployment that is not running is 409 naming its status`, async (t) => {
    for (const status of ['stopped', 'deploying', 'failed']) {
      const deployment = await deploymentOf(status);
      const res = await endpoint.send(deployment.token, endpoint.body(deployment.id));
      t.is(res.status, 409);
      t.like(res.body, { code: 'DEPLOYMENT_NOT_RUNNING', message: `Deployment chat is ${status}; inference needs it running` });
    }
  });

  test(`${endpoint.name}: no ready replica, or none reachable, is 503 with Retry-After`, async (t) => {
    const none = await deploymentOf();
    const empty = await endpoint.send(none.token, endpoint.body(none.id));
    t.is(empty.status, 503);
    t.like(empty.body, { code: 'REPLICA_UNAVAILABLE', message: 'Deployment chat has no ready replica' });
    t.is(empty.headers.get('retry-after'), String(RETRY_AFTER_SECONDS));

    const starting = await deploymentOf();
    await podOf(starting, nextAddress(), { ready: false });
    t.is((await endpoint.send(starting.token, endpoint.body(starting.id))).status, 503, 'a pod that is not Ready takes no requests');

    const refusing = await deploymentOf();
    await podOf(refusing, nextAddress());
    const unreachable = await endpoint.send(refusing.token, endpoint.body(refusing.id));
    t.is(unreachable.status, 503);
    t.like(unreachable.body, { code: 'REPLICA_UNAVAILABLE', message: 'None of the 1 ready replicas of deployment chat can be reached' });
    t.is(unreachable.headers.get('retry-after'), String(RETRY_AFTER_SECONDS));
  });

  test(`${endpoint.name}: a model server that stays silent is 504`, async (t) => {
    const deployment = await deploymentOf();
    const server = await startFakeModelServer(nextAddress(), silent);
    await podOf(deployment, server.address);
    const started = Date.now();
    const res = await endpoint.send(deployment.token, endpoint.body(deployment.id));
    t.is(res.status, 504);
    t.like(res.body, { code: 'UPSTREAM_TIMEOUT', statusCode: 504, error: 'Gateway Timeout' });
    t.true(Date.now() - started >= SILENCE_MS - 100);
    await server.received[0]!.closed;
  });

  test(`${endpoint.name}: the model server's refusal is 400 with its message; its failure 502`, async (t) => {
    const deployment = await deploymentOf();
    let status = 400;
    const server = await startFakeModelServer(nextAddress(), (_, res) => {
      res.writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'max_tokens is too large', type: 'BadRequestError', param: null, code: status } }));
    });
    await podOf(deployment, server.address);
    const refused = await endpoint.send(deployment.token, endpoint.body(deployment.id));
    t.is(refused.status, 400);
    t.like(refused.body, { code: 'INFERENCE_REJECTED', message: 'The model server refused the request (400): max_tokens is too large' });
    status = 500;
    const failed = await endpoint.send(deployment.token, endpoint.body(deployment.id));
    t.is(failed.status, 502);
    t.like(failed.body, { code: 'UPSTREAM_ERROR' });
  });
}

test('a chat request needs messages or a prompt, not both (422) nor neither (400)', async (t) => {
  const deployment = await deploymentOf();
  const neither = await infer(deployment.token, { deployment: deployment.id });
  t.is(neither.status, 400);
  t.regex(neither.body.message, /^Invalid field messages: give either messages/);
  const both = await infer(deployment.token, { ...chat(deployment.id), prompt: 'Hi' });
  t.is(both.status, 422);
  t.is((await infer(deployment.token, chat(deployment.id, { stream: 'yes' }))).status, 400);
  t.is((await infer(deployment.token, { deployment: deployment.id, messages: 'Hi' })).status, 400);
});

test('a cluster naming a gateway URL gets the requests at <gatewayUrl>/<namespace>/<name>/v1/...', async (t) => {
  const gateway = await startFakeModelServer(nextAddress());
  const created = await api.request('POST', '/v1/admin/clusters', {
    token: admin, body: { provider: 'kubernetes', name: 'behind-gateway', kubeconfig, gatewayUrl: `http://${gateway.address}:${MODEL_PORT}/kiln/` },
  });
  t.is(created.status, 201);
  t.is(created.body.gatewayUrl, `http://${gateway.address}:${MODEL_PORT}/kiln/`);
  const deployment = await deploymentOf();
  await api.pool.query(`UPDATE deployment SET cluster_id = $2 WHERE id = $1`, [deployment.id, created.body.id]);
  const res = await infer(deployment.token, chat(deployment.id));
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.headers.get('x-kiln-replica'), 'gateway');
  t.is(gateway.received[0]!.path, `/kiln/${namespaceOf(deployment.organizationId)}/chat/v1/chat/completions`);
  const cleared = await api.request('PATCH', `/v1/admin/clusters/${created.body.id}`, { token: admin, body: { gatewayUrl: null } });
  t.is(cleared.body.gatewayUrl, null);
});

test('pod discovery: one watch per cluster and namespace, shared, following pods as they turn Ready and go; stopped when idle', async (t) => {
  const directory = createReplicaDirectory({ log: { warn: () => {} }, options: { idleMs: 1000, syncTimeoutMs: 10_000 } });
  t.teardown(() => directory.close());
  const cluster = { clusterId: 'clu_discovery', kubeconfig };
  const [one, two] = [await deploymentOf(), await deploymentOf()];
  const namespace = namespaceOf(one.organizationId);
  const first = await podOf(one, '127.1.255.1');
  t.deepEqual(await directory.ready(cluster, namespace, 'chat'), [{ pod: first, address: '127.1.255.1', port: MODEL_PORT }]);
  t.deepEqual(await directory.ready(cluster, namespace, 'other'), []);
  t.is(directory.watching(), 1, 'one watch answers every deployment of the namespace');
  t.deepEqual(await directory.ready(cluster, namespaceOf(two.organizationId), 'chat'), []);
  t.is(directory.watching(), 2);

  // A pod turning Ready after the watch started is seen through the watch; a deleted one goes.
  const second = await unreadyPodOf(one);
  t.is((await directory.ready(cluster, namespace, 'chat')).length, 1);
  await markReady(namespace, second, '127.1.255.2');
  await eventually('the second pod seen Ready', async () => (await directory.ready(cluster, namespace, 'chat')).length === 2, 10_000);
  await gpuCluster.api.request('DELETE', `/api/v1/namespaces/${namespace}/pods/${first}?gracePeriodSeconds=0`);
  await eventually('the first pod gone', async () => {
    const ready = await directory.ready(cluster, namespace, 'chat');
    return ready.length === 1 && ready[0]!.pod === second;
  }, 10_000);

  // No request for a while: both watches stop; the next request lists afresh.
  await eventually('the idle watches stopped', () => directory.watching() === 0, 10_000);
  t.deepEqual((await directory.ready(cluster, namespace, 'chat')).map((r) => r.pod), [second]);
  t.is(directory.watching(), 1);
});


test('a deployment scaled to zero is woken by a request, which is held until a replica is Ready and then answered', async (t) => {
  const deployment = await deploymentOf('scaled_to_zero', 'sleepy', { replicas: 0, minReplicas: 0, maxReplicas: 2 });
  const answer = infer(deployment.token, chat(deployment.id));
  // The workflow would start a pod now; here the pod turns Ready a moment later.
  await sleep(1500);
  const server = await startFakeModelServer(nextAddress());
  const pod = await podOf(deployment, server.address);
  const res = await answer;
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.headers.get('x-kiln-replica'), pod);
  t.is(server.received.length, 1, 'held, not dropped nor sent twice');
});

test('a request for a deployment that does not wake in time is 503 with Retry-After; one that cannot scale to zero is not held', async (t) => {
  const sleepy = await deploymentOf('scaled_to_zero', 'sleepy', { replicas: 0, minReplicas: 0, maxReplicas: 2 });
  const started = Date.now();
  const res = await infer(sleepy.token, chat(sleepy.id));
  t.is(res.status, 503);
  t.true(Date.now() - started >= WAKE_TIMEOUT_MS, 'held for the wake timeout');
  t.is(res.headers.get('retry-after'), String(RETRY_AFTER_SECONDS));
  t.regex(res.body.message, /is waking from zero replicas and none was ready within 8 s/);

  const fixed = await deploymentOf('running', 'fixed');
  const quick = Date.now();
  const none = await infer(fixed.token, chat(fixed.id));
  t.is(none.status, 503);
  t.true(Date.now() - quick < WAKE_TIMEOUT_MS, 'no replica and no wake to wait for: answered at once');
  t.regex(none.body.message, /has no ready replica/);
});

// ---- On the API, a deployment resolved before: requests are sent ahead of its lookup, which still decides ----
// (The gateway answers from a lookup made within TARGET_FRESH_MS instead: test/gateway/gateway.test.ts.)

const inferOnApi = (token: string, body: unknown) => api.request('POST', '/v1/inference', { token, body });

test('a deployment stopped, then deleted, after it answered is 409, then 404: the early request is cancelled', async (t) => {
  const deployment = await deploymentOf();
  const server = await startFakeModelServer(nextAddress());
  await podOf(deployment, server.address);
  t.is((await inferOnApi(deployment.token, chat(deployment.id))).status, 200);

  await api.pool.query(`UPDATE deployment SET status = 'stopped' WHERE id = $1`, [deployment.id]);
  const stopped = await inferOnApi(deployment.token, chat(deployment.id));
  t.is(stopped.status, 409);
  t.like(stopped.body, { code: 'DEPLOYMENT_NOT_RUNNING', message: 'Deployment chat is stopped; inference needs it running' });
  await api.pool.query(`UPDATE deployment SET status = 'running', deleted_at = now() WHERE id = $1`, [deployment.id]);
  const deleted = await inferOnApi(deployment.token, chat(deployment.id));
  t.is(deleted.status, 404);
  t.like(deleted.body, { code: 'DEPLOYMENT_NOT_FOUND' });
  await eventually('the early requests closed', () => server.open() === 0, 10_000);
  t.true(server.received.every((r) => r.body.model === 'meta-llama/Llama-3.1-8B-Instruct'));
});

test('a deployment deleted and made again under the same name: the request is sent again to the new one, which the record names', async (t) => {
  const old = await deploymentOf('running', 'chat');
  const server = await startFakeModelServer(nextAddress());
  const oldPod = await podOf(old, server.address);
  t.is((await inferOnApi(old.token, chat('chat'))).status, 200);

  // The old one is gone (pod and row); a new one of the same name serves another model.
  const namespace = namespaceOf(old.organizationId);
  await gpuCluster.api.request('DELETE', `/api/v1/namespaces/${namespace}/pods/${oldPod}?gracePeriodSeconds=0`);
  await api.pool.query(`UPDATE deployment SET deleted_at = now() WHERE id = $1`, [old.id]);
  const created = await api.request('POST', '/v1/deployments', { token: old.token, body: { ...validDeployment('chat'), model: 'Qwen/Qwen2.5-0.5B-Instruct' } });
  t.is(created.status, 201, JSON.stringify(created.body));
  await api.pool.query(`UPDATE deployment SET status = 'running' WHERE id = $1`, [created.body.id]);
  await podOf(old, server.address);

  const res = await inferOnApi(old.token, chat('chat'));
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.model, 'Qwen/Qwen2.5-0.5B-Instruct', 'answered on the new deployment\'s model');
  const [record] = await auditDetails(created.body.id, 'inferV1');
  t.is(record.status_code, 200);
  t.is((await auditDetails(old.id, 'inferV1')).length, 1, 'the old deployment has the first request\'s record alone');
});

test('a deployment scaled to zero after it answered is woken by the next request, held until a replica is Ready', async (t) => {
  const deployment = await deploymentOf('running', 'sleepy', { replicas: 1, minReplicas: 0, maxReplicas: 2 });
  const first = await startFakeModelServer(nextAddress());
  const firstPod = await podOf(deployment, first.address);
  t.is((await infer(deployment.token, chat(deployment.id))).status, 200);

  // Scaled to zero: its pod and model server are gone.
  await first.close();
  await gpuCluster.api.request('DELETE', `/api/v1/namespaces/${namespaceOf(deployment.organizationId)}/pods/${firstPod}?gracePeriodSeconds=0`);
  await api.pool.query(`UPDATE deployment SET status = 'scaled_to_zero', current_replicas = 0 WHERE id = $1`, [deployment.id]);
  const answer = infer(deployment.token, chat(deployment.id));
  await sleep(1500);
  const second = await startFakeModelServer(nextAddress());
  const pod = await podOf(deployment, second.address);
  const res = await answer;
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.headers.get('x-kiln-replica'), pod);
  t.is(second.received.length, 1);
});
