// The main job, end to end, through the public API only: REST -> Temporal workflow -> Pulumi engine ->
// Kubernetes API server -> scheduled GPU pods -> a model server that answers. Each step is checked where a
// user or an SRE would look: the API, the webhooks, the cluster.
import anyTest, { type TestFn } from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { USAGE_UNITS_PER_CENT, unitsToCents } from '../../catalog/billing.ts';
import { GPU_RESOURCE, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { SPEND_RESOLUTION_SECONDS } from '../../lib/prometheus/replica-hours.ts';
import { eventually } from '../support/eventually.ts';
import { deploymentWhen, newTenant, startKiln, type Kiln } from '../support/kiln.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';

interface Hook { type: string; deploymentId: string; verified: boolean }
interface Context {
  kiln: Kiln;
  tenant: Awaited<ReturnType<typeof newTenant>>;
  hooks: Hook[];
  receiver: Server;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  // Four one-GPU L4 machines and one eight-GPU H100 machine.
  const kiln = await startKiln(import.meta.filename, {
    nodePools: [{ gpuType: 'nvidia-l4', nodes: 4, gpusPerNode: 1 }, { gpuType: 'nvidia-h100-80gb', nodes: 1, gpusPerNode: 8 }],
  });
  t.context = { kiln } as Context; // stopped by the after hook even if the rest of this set-up fails
  const tenant = await newTenant(kiln, 'lifecycle');
  const hooks: Hook[] = [];
  const signing: { verifier?: Webhook } = {};
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      let verified = false;
      try { signing.verifier!.verify(body, req.headers as Record<string, string>); verified = true; } catch { /* recorded as unverified */ }
      const event = JSON.parse(body) as { event: string; data: { id: string } };
      hooks.push({ type: event.event, deploymentId: event.data.id, verified });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const subscribed = await kiln.request('POST', '/api/webhooks', {
    token: tenant.token,
    body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/kiln`, events: ['deployment.created', 'deployment.running', 'deployment.failed', 'deployment.stopped', 'deployment.deleted'] },
  });
  if (subscribed.status !== 201) throw new Error(`webhook subscription: ${subscribed.status} ${JSON.stringify(subscribed.body)}`);
  signing.verifier = new Webhook(subscribed.body.data.secret.slice('whsec_'.length));
  t.context = { kiln, tenant, hooks, receiver };
});
test.after.always(async (t) => {
  t.context.receiver?.close();
  await t.context.kiln?.stop();
});

interface Pod {
  metadata: { name: string };
  spec: { nodeName?: string; containers: { args: string[]; resources: { limits: Record<string, string> } }[] };
  status: { podIP?: string; conditions?: { type: string; status: string }[] };
}
const isReady = (p: Pod) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

function clusterView(t: { context: Context }) {
  const { kiln, tenant } = t.context;
  const namespace = namespaceOf(tenant.organizationId);
  return {
    namespace,
    pods: async (name: string) => (await kiln.cluster.api.get<{ items: Pod[] }>(
      `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`app.kubernetes.io/instance=${name}`)}`)).items,
    exists: async (path: string) => kiln.cluster.api.get(path).then(() => true, (e: { status?: number }) => (e.status === 404 ? false : Promise.reject(e))),
  };
}

async function create(t: { context: Context }, body: Record<string, unknown>) {
  const res = await t.context.kiln.request('POST', '/api/deployments', { token: t.context.tenant.key, body: { runtime: 'vllm', ...body } });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id as string;
}

const running = (t: { context: Context }, id: string, what = 'running') =>
  deploymentWhen(t.context.kiln, t.context.tenant.key, id, (d) => d.status === 'running' || d.status === 'failed', what)
    .then((d) => { if (d.status !== 'running') throw new Error(`${id} failed: ${d.failureReason}`); return d; });

test.serial('a created deployment goes to running: its pod holds an L4 GPU on an L4 node, and signed webhooks say so', async (t) => {
  const id = await create(t, { name: 'chat', model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4', replicas: 1, minReplicas: 1, maxReplicas: 3 });
  const deployment = await running(t, id);
  t.is(deployment.name, 'chat');

  const cluster = clusterView(t);
  const [pod] = (await cluster.pods('chat')).filter(isReady);
  t.truthy(pod, 'one Ready pod');
  t.regex(pod!.spec.nodeName ?? '', /^gpu-nvidia-l4-\d$/);
  t.is(pod!.spec.containers[0]!.resources.limits[GPU_RESOURCE], '1');
  t.true(pod!.spec.containers[0]!.args.includes('meta-llama/Llama-3.1-8B-Instruct'));
  const node = await t.context.kiln.cluster.api.get<{ metadata: { labels: Record<string, string> } }>(`/api/v1/nodes/${pod!.spec.nodeName}`);
  t.is(node.metadata.labels[GPU_TYPE_LABEL], 'nvidia-l4');
  t.true(await cluster.exists(`/api/v1/namespaces/${cluster.namespace}/services/chat`));

  // The simulated model server answers on the pod's address, as vLLM would.
  const models = await (await fetch(`http://${pod!.status.podIP}:8000/v1/models`)).json() as { data: { id: string }[] };
  t.is(models.data[0]!.id, 'meta-llama/Llama-3.1-8B-Instruct');

  const hooks = await eventually('created and running webhooks', () => {
    const mine = t.context.hooks.filter((h) => h.deploymentId === id);
    return mine.some((h) => h.type === 'deployment.running') && mine.some((h) => h.type === 'deployment.created') ? mine : undefined;
  });
  t.true(hooks.every((h) => h.verified), 'every delivery carries a valid Standard Webhooks signature');
});

test.serial('scaling to 3 runs three Ready pods on three L4 nodes', async (t) => {
  const { kiln, tenant } = t.context;
  const list = await kiln.request('GET', '/api/deployments?limit=20', { token: tenant.key });
  const id = list.body.data.find((d: { name: string }) => d.name === 'chat').id as string;
  const scaled = await kiln.request('POST', `/v1/deployments/${id}/actions`, { token: tenant.key, body: { action: 'scale', replicas: 3 } });
  t.is(scaled.status, 200, JSON.stringify(scaled.body));
  await deploymentWhen(kiln, tenant.key, id, (d) => d.status === 'running' && d.currentReplicas === 3, 'three replicas running');
  const pods = (await clusterView(t).pods('chat')).filter(isReady);
  t.is(pods.length, 3);
  t.is(new Set(pods.map((p) => p.spec.nodeName)).size, 3, 'one pod per one-GPU node');
});

test.serial('a second deployment of the organization runs beside the first, on the H100 machine', async (t) => {
  const id = await create(t, { name: 'coder', model: 'Qwen/Qwen2.5-Coder-7B-Instruct', gpu: 'nvidia-h100-80gb' });
  await running(t, id);
  const [pod] = (await clusterView(t).pods('coder')).filter(isReady);
  t.is(pod!.spec.nodeName, 'gpu-nvidia-h100-80gb-0');
  t.is((await clusterView(t).pods('chat')).filter(isReady).length, 3, 'the first deployment is untouched');
});

test.serial('inference through Kiln reaches each deployment\'s model server, whole and streamed, and the probe reports its timing', async (t) => {
  const { kiln, tenant } = t.context;
  const ask = (deployment: string, stream: boolean) => fetch(`${kiln.url()}/v1/inference`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ deployment, messages: [{ role: 'user', content: 'Name three rivers.' }], max_tokens: 12, stream }),
  });

  for (const [name, model] of [['chat', 'meta-llama/Llama-3.1-8B-Instruct'], ['coder', 'Qwen/Qwen2.5-Coder-7B-Instruct']] as const) {
    const whole = await ask(name, false);
    t.is(whole.status, 200);
    const answer = await whole.json() as { model: string; choices: { message: { content: string } }[]; usage: { completion_tokens: number } };
    t.is(answer.model, model);
    t.true(answer.choices[0]!.message.content.length > 0);
    t.is(answer.usage.completion_tokens, 12);
  }

  const streamed = await ask('chat', true);
  t.is(streamed.status, 200);
  t.regex(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
  const text = await streamed.text();
  const chunks = text.split('\n\n').filter((c) => c.startsWith('data: '));
  t.is(chunks.at(-1), 'data: [DONE]');
  t.true(chunks.length >= 12, `one chunk per token at least, got ${chunks.length}`);

  const probe = await kiln.request('POST', '/v1/inference/test', { token: tenant.key, body: { deployment: 'coder' } });
  t.is(probe.status, 200, JSON.stringify(probe.body));
  t.is(probe.body.model, 'Qwen/Qwen2.5-Coder-7B-Instruct');
  t.true(probe.body.timeToFirstTokenMs > 0 && probe.body.latencyMs >= probe.body.timeToFirstTokenMs);
  t.true(probe.body.tokens.completion > 0);
});

test.serial('load through Kiln shows in the metric, pricing, dashboard and analytics routes, read from Prometheus scraping the model servers and from the audit trail', async (t) => {
  const { kiln, tenant } = t.context;
  const list = await kiln.request('GET', '/api/deployments?limit=20', { token: tenant.key });
  const chat = list.body.data.find((d: { name: string }) => d.name === 'chat');
  const ask = () => kiln.request('POST', '/v1/inference', { token: tenant.key, body: { deployment: 'chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 } });
  for (let i = 0; i < 30; i++) t.is((await ask()).status, 200);
  const latest = (points: Array<{ time: number; value: number | null }>) => points.filter((p) => p.value !== null).at(-1)?.value ?? null;
  // Prometheus scrapes each second; the rate needs two scrapes after the load.
  // Every figure of the load, its time to first token included (on a busy machine the scrapes that carry it
  // may land a little apart).
  const metrics = await eventually('the load in the metrics, its time to first token included', async () => {
    const res = await kiln.request('GET', `/v1/deployments/${chat.id}/metrics?orgId=${tenant.organizationId}&step=5`, { token: tenant.key });
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    // Three replicas were scaled up before: each is found and answers its scrape.
    return (latest(res.body.series.generationTokensPerSecond) ?? 0) > 0 && (latest(res.body.series.requestsPerSecond) ?? 0) > 0
      && latest(res.body.series.readyReplicas) === 3
      && res.body.series.timeToFirstTokenSeconds.p95.some((p: { value: number | null }) => (p.value ?? 0) > 0) && res.body;
  }, 60_000);
  t.is(metrics.stepSeconds, 5);
  // The organization's view: every live deployment's series, and its figures now.
  const all = await kiln.request('GET', `/v1/monitoring/metrics?orgId=${tenant.organizationId}&step=5`, { token: tenant.key });
  t.is(all.status, 200);
  t.deepEqual(all.body.deployments.map((d: { name: string }) => d.name).sort(), ['chat', 'coder']);
  t.is(latest(all.body.deployments.find((d: { name: string }) => d.name === 'chat').series.readyReplicas), 3);
  // Both deployments' four replicas, once the last of them has been scraped.
  const now = await eventually('four replicas in the figures now', async () => {
    const res = await kiln.request('GET', `/v1/metrics?orgId=${tenant.organizationId}`, { token: tenant.key });
    return res.status === 200 && res.body.totals.readyReplicas === 4 && res;
  }, 30_000);
  t.like(now.body, { windowSeconds: 60, totals: { deployments: 2, readyReplicas: 4 } });
  t.true(now.body.totals.requestsPerSecond > 0);
  t.true(now.body.deployments.find((d: { name: string }) => d.name === 'chat').generationTokensPerSecond > 0);

  // What it costs: three L4 replicas at 80 cents an hour each; replica-hours measured since the month began;
  // a cost per million tokens from the measured throughput; on an H100 one GPU a replica would hold it.
  // Replica-hours are Prometheus's ready replicas sampled on 15 s boundaries (SPEND_RESOLUTION_SECONDS): a
  // deployment running for less than that may not have crossed one yet.
  const pricing = await eventually('replica-hours measured this month', async () => {
    const res = await kiln.request('GET', `/v1/deployments/${chat.id}/pricing?orgId=${tenant.organizationId}`, { token: tenant.key });
    return (res.status !== 200 || res.body.month.replicaHours > 0) && res;
  }, 2 * SPEND_RESOLUTION_SECONDS * 1000);
  t.is(pricing.status, 200);
  t.like(pricing.body, { gpu: 'nvidia-l4', gpusPerReplica: 1, replicas: 3, hourlyCents: 240 });
  t.true(pricing.body.month.replicaHours > 0 && pricing.body.month.projectedCents >= pricing.body.month.spentCents);
  // A few hundred tokens in the last hour are too few for a cost per million tokens, and the answer says so.
  t.like(pricing.body.throughput, { windowSeconds: 3600, minimumTokens: 1000, costPerMillionTokensCents: null });
  t.true(pricing.body.throughput.generationTokens > 0 && pricing.body.throughput.generationTokens < 1000, JSON.stringify(pricing.body.throughput));
  t.regex(pricing.body.throughput.note, /^Not enough traffic yet: \d+ tokens generated in the last hour; a cost per million tokens needs at least 1,000\.$/);
  t.like(pricing.body.alternatives.find((a: { gpu: string }) => a.gpu === 'nvidia-h100-80gb'), { fits: true, available: true, gpusPerReplica: 1, hourlyCents: 1350, savingCents: -1110 });
  // The cluster has L4 and H100 nodes alone: nothing offers a T4.
  const t4 = pricing.body.alternatives.find((a: { gpu: string }) => a.gpu === 'nvidia-t4');
  t.like(t4, { available: false });
  t.regex(t4.reason, /no GPU cluster you may use offers nvidia-t4 now$/);

  // The dashboard's first screen: both running, some spend and today's tokens, chat among the slowest.
  const dashboard = await kiln.request('GET', `/v1/dashboard/metrics?orgId=${tenant.organizationId}`, { token: tenant.key });
  t.is(dashboard.status, 200);
  t.like(dashboard.body.deploymentsByStatus, { running: 2, pending: 0, failed: 0, deleted: 0 });
  t.is(Object.values<number>(dashboard.body.deploymentsByStatus).reduce((a, b) => a + b, 0), 2);
  t.true(dashboard.body.spend.todayCents > 0 && dashboard.body.spend.monthCents >= dashboard.body.spend.todayCents);
  // Counted from Prometheus's samples: what a pod counted before its first scrape (it had just become Ready) is not seen.
  t.true(dashboard.body.tokensToday.generation > 0, JSON.stringify(dashboard.body));
  t.true(dashboard.body.slowest.some((d: { name: string; deploymentId: string }) => d.name === 'chat' && d.deploymentId === chat.id));

  // Usage over time: the 30 requests of 8 tokens to chat, by deployment (with its measured latency) and by the key that sent them.
  type Usage = { requests: number; completionTokens: number };
  const sum = (points: Usage[]) => points.reduce((acc, p) => ({ requests: acc.requests + p.requests, completionTokens: acc.completionTokens + p.completionTokens }), { requests: 0, completionTokens: 0 });
  const analytics = await kiln.request('GET', `/v1/monitoring/analytics?orgId=${tenant.organizationId}&step=60`, { token: tenant.key });
  t.is(analytics.status, 200);
  const chatUsage = analytics.body.byDeployment.find((d: { deploymentId: string }) => d.deploymentId === chat.id);
  t.true(sum(chatUsage.points).requests >= 30 && sum(chatUsage.points).completionTokens >= 30 * 8, JSON.stringify(sum(chatUsage.points)));
  t.true(chatUsage.e2eLatencyP95Seconds.some((p: { value: number | null }) => (p.value ?? 0) > 0));
  const keyUsage = analytics.body.byApiKey.find((k: { prefix: string | null }) => k.prefix !== null && tenant.key.startsWith(k.prefix));
  t.true(sum(keyUsage.points).requests >= 30);
  // Another organization does not see it.
  const other = await newTenant(kiln, 'metrics-other');
  t.is((await kiln.request('GET', `/v1/deployments/${chat.id}/metrics?orgId=${other.organizationId}`, { token: other.key })).status, 404);
});

test.serial('GET /v1/deployments/{id}/logs reads the pods\' vLLM lines from the cluster\'s pod-log API; pod narrows; follow streams new lines until the client leaves', async (t) => {
  const { kiln, tenant } = t.context;
  const list = await kiln.request('GET', '/api/deployments?limit=20', { token: tenant.key });
  const chat = list.body.data.find((d: { name: string }) => d.name === 'chat');
  const path = (query: string) => `/v1/deployments/${chat.id}/logs?orgId=${tenant.organizationId}${query}`;
  type Line = { pod: string; time: string; line: string };
  const logs = async (query = '') => {
    const res = await kiln.request('GET', path(query), { token: tenant.key });
    t.is(res.status, 200, JSON.stringify(res.body));
    return res.body as Line[];
  };
  // uvicorn's access line of an inference request, as vLLM's server writes it.
  const access = /^INFO: +[\d.]+:\d+ - "POST \/v1\/chat\/completions HTTP\/1\.1" 200 OK$/;
  const ask = () => kiln.request('POST', '/v1/inference', { token: tenant.key, body: { deployment: 'chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 } });
  const pods = (await clusterView(t).pods('chat')).map((p) => p.metadata.name).sort();
  t.is(pods.length, 3);
  for (let i = 0; i < 3; i++) t.is((await ask()).status, 200);

  const all = await logs('&tail=10000');
  t.deepEqual([...new Set(all.map((l) => l.pod))].sort(), pods, 'lines from each of the three pods');
  for (const pod of pods) {
    const mine = all.filter((l) => l.pod === pod).map((l) => l.line);
    t.true(mine.some((l) => /^INFO \d\d-\d\d \d\d:\d\d:\d\d \[api_server\.py:\d+\] vLLM API server version /.test(l)), `${pod}: vLLM's start-up line`);
    t.true(mine.includes('INFO:     Application startup complete.'), `${pod}: uvicorn's start-up line`);
  }
  t.true(all.filter((l) => access.test(l.line)).length >= 3, 'the inference requests\' access lines');
  const times = all.map((l) => Date.parse(l.time));
  t.deepEqual(times, [...times].sort((a, b) => a - b), 'oldest first across the pods');

  t.is((await logs('&tail=5')).length, 5);
  const one = await logs(`&pod=${pods[1]}`);
  t.true(one.length > 0 && one.length <= 100);
  t.true(one.every((l) => l.pod === pods[1]));
  const unknown = await kiln.request('GET', path('&pod=chat-nosuchpod'), { token: tenant.key });
  t.is(unknown.status, 422);
  t.is(unknown.body.code, 'VALIDATION_ERROR');
  const since = new Date(Date.parse(all.at(-1)!.time) - 2000);
  t.true((await logs(`&since=${since.toISOString()}&tail=10000`)).every((l) => Date.parse(l.time) >= since.getTime()));

  // Follow: the stream opens, then a new request's access line arrives on it.
  const client = new AbortController();
  const stream = await fetch(kiln.url() + path('&follow=true&tail=1'), { headers: { authorization: `Bearer ${tenant.key}` }, signal: client.signal });
  t.is(stream.status, 200);
  t.regex(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
  const sent = Date.now();
  const asked = await ask();
  t.is(asked.status, 200);
  const replica = asked.headers.get('x-kiln-replica') ?? 'no X-Kiln-Replica';
  const decoder = new TextDecoder();
  let buffer = '';
  let found: Line | undefined;
  const deadline = setTimeout(() => client.abort(), 30_000);
  try {
    for await (const chunk of stream.body!) {
      buffer += decoder.decode(chunk, { stream: true });
      const events = buffer.split('\n\n');
      buffer = events.pop()!;
      found = events.filter((e) => e.startsWith('data: ')).map((e) => JSON.parse(e.slice(6)) as Line)
        .find((l) => access.test(l.line) && Date.parse(l.time) >= sent);
      if (found) break;
    }
  } finally {
    clearTimeout(deadline);
    client.abort();
  }
  t.truthy(found, 'the new request\'s access line, streamed');
  t.is(found!.pod, replica, 'from the pod that answered it');
  // Another organization does not see the logs.
  const other = await newTenant(kiln, 'logs-other');
  t.is((await kiln.request('GET', `/v1/deployments/${chat.id}/logs?orgId=${other.organizationId}`, { token: other.key })).status, 404);
});

test.serial('pods that cannot be placed fail the deployment with the scheduler\'s reason; a retry after capacity is added runs it', async (t) => {
  const { kiln, tenant } = t.context;
  // Three of the four L4 GPUs are taken by `chat`: two more replicas leave one pod unschedulable.
  const id = await create(t, { name: 'overflow', model: 'Qwen/Qwen2.5-7B-Instruct', gpu: 'nvidia-l4', replicas: 2, minReplicas: 1, maxReplicas: 2 });
  const failed = await deploymentWhen(kiln, tenant.key, id, (d) => d.status === 'failed', 'the deployment to fail', 180_000);
  t.regex(failed.failureReason, /1 of 2 replicas cannot be placed: .*Insufficient nvidia\.com\/gpu.*; the replicas it placed were removed, so it holds no GPUs$/);
  // The replica that was placed gave its GPU back: what runs is what Kiln shows (0 replicas) and bills.
  t.is(failed.currentReplicas, 0);
  await eventually('the placed replica removed', async () => (await clusterView(t).pods('overflow')).length === 0);
  await eventually('the failed webhook', () => t.context.hooks.some((h) => h.deploymentId === id && h.type === 'deployment.failed'));

  await kiln.cluster.addNodes({ gpuType: 'nvidia-l4', nodes: 5, gpusPerNode: 1 }); // a fifth L4 machine
  const retried = await kiln.request('POST', `/v1/recovery/deployments/${id}`, { token: tenant.token, body: { action: 'retry' } });
  t.true([200, 202].includes(retried.status), JSON.stringify(retried.body));
  // The status stays failed until the workflow takes the retry up: only then can running() tell a new failure.
  await deploymentWhen(kiln, tenant.key, id, (d) => d.status !== 'failed', 'the retry taken up');
  await running(t, id, 'running after the retry');
  t.is((await clusterView(t).pods('overflow')).filter(isReady).length, 2);
});

test.serial('stop removes the pods, start brings them back, delete removes the objects and the stack', async (t) => {
  const { kiln, tenant } = t.context;
  const list = await kiln.request('GET', '/api/deployments?limit=20', { token: tenant.key });
  const id = list.body.data.find((d: { name: string }) => d.name === 'coder').id as string;
  const cluster = clusterView(t);

  t.is((await kiln.request('POST', `/v1/deployments/${id}/actions`, { token: tenant.key, body: { action: 'stop' } })).status, 200);
  await deploymentWhen(kiln, tenant.key, id, (d) => d.status === 'stopped', 'stopped');
  await eventually('no pods left', async () => (await cluster.pods('coder')).length === 0);
  t.false(await cluster.exists(`/apis/apps/v1/namespaces/${cluster.namespace}/deployments/coder`));

  t.is((await kiln.request('POST', `/v1/deployments/${id}/actions`, { token: tenant.key, body: { action: 'start' } })).status, 200);
  await running(t, id, 'running again');
  t.is((await cluster.pods('coder')).filter(isReady).length, 1);

  // The worker's default state backend: the Pulumi CLI's rows in Kiln's database, each keyed by the database's name and the file's path.
  const database = new pg.Pool({ connectionString: kiln.databaseUrl, max: 1 });
  t.teardown(() => database.end());
  const stackRows = async () => (await database.query('SELECT key FROM pulumi_state WHERE key = $1', [`${new URL(kiln.databaseUrl).pathname.slice(1)}/.pulumi/stacks/kiln-deployment/${id}.json`])).rowCount;
  t.is(await stackRows(), 1, 'the stack is in the state backend while the deployment lives');
  t.false(existsSync(join(kiln.dataDir, 'pulumi-state')), 'no state on the worker\'s disk');
  t.is((await kiln.request('DELETE', `/api/deployments/${id}`, { token: tenant.key })).status, 200);
  // A deleted deployment is gone from the API (404), as any deleted resource.
  await eventually('the deployment deleted', async () => (await kiln.request('GET', `/api/deployments/${id}`, { token: tenant.key })).status === 404, 120_000);
  await eventually('the objects gone', async () => !(await cluster.exists(`/apis/apps/v1/namespaces/${cluster.namespace}/deployments/coder`))
    && !(await cluster.exists(`/api/v1/namespaces/${cluster.namespace}/services/coder`)));
  t.is((await cluster.pods('coder')).length, 0);
  t.is(await stackRows(), 0, 'the stack is removed from the state backend');
  await eventually('the deleted webhook', () => t.context.hooks.some((h) => h.deploymentId === id && h.type === 'deployment.deleted'));
});

test.serial('metering draws what the deployments ran from credits: the deleted deployment is charged for the time its replicas ran, each interval once', async (t) => {
  const { kiln, tenant } = t.context;
  const pool = new pg.Pool({ connectionString: kiln.databaseUrl });
  t.teardown(() => pool.end());
  const { rows: [coder] } = await pool.query<{ id: string; gpus_per_replica: number }>(
    `SELECT id, gpus_per_replica FROM deployment WHERE organization_id = $1 AND name = 'coder'`, [tenant.organizationId]);
  const { rows: records } = await pool.query<{ observed_at: Date; replicas: number }>(
    'SELECT observed_at, replicas FROM replica_record WHERE deployment_id = $1 ORDER BY observed_at', [coder!.id]);
  const deletedAt = records.at(-1)!.observed_at;
  await eventually('metering past the deletion', async () => {
    const { rows: [org] } = await pool.query<{ metered_until: Date | null }>('SELECT metered_until FROM organization WHERE id = $1', [tenant.organizationId]);
    return !!org!.metered_until && org!.metered_until >= deletedAt;
  }, 60_000);

  // The replica history the workflow wrote, walked here on its own: each record's replicas until the next.
  let expectedGpuMs = 0;
  for (let i = 0; i + 1 < records.length; i++) expectedGpuMs += records[i]!.replicas * coder!.gpus_per_replica * (records[i + 1]!.observed_at.getTime() - records[i]!.observed_at.getTime());
  const { rows: [charged] } = await pool.query<{ gpu_ms: string; units: string }>(
    'SELECT coalesce(sum(gpu_ms), 0) AS gpu_ms, coalesce(sum(usage_units), 0) AS units FROM usage_charge WHERE deployment_id = $1', [coder!.id]);
  t.true(expectedGpuMs > 0);
  t.is(Number(charged!.gpu_ms), expectedGpuMs);
  // It ran while it was running, as its events say (the edges are written a moment after the workflow sees them).
  const { rows: events } = await pool.query<{ type: string; created_at: Date }>(
    `SELECT type, created_at FROM deployment_event WHERE deployment_id = $1 AND type IN ('deployment.running', 'deployment.stopped', 'deployment.scaled') ORDER BY created_at`, [coder!.id]);
  t.true(events.some((e) => e.type === 'deployment.stopped'), 'it was stopped once, and charged nothing meanwhile');

  // Whole cents drawn: the metered total, rounded down, each interval once.
  const { rows: [org] } = await pool.query<{ metered_units: string }>('SELECT metered_units FROM organization WHERE id = $1', [tenant.organizationId]);
  const { rows: debits } = await pool.query<{ amount_cents: number; reference: string }>(`SELECT amount_cents, reference FROM credit_entry WHERE organization_id = $1 AND kind = 'debit'`, [tenant.organizationId]);
  t.is(-debits.reduce((sum, d) => sum + d.amount_cents, 0), Math.floor(Number(org!.metered_units) / USAGE_UNITS_PER_CENT));
  t.is(new Set(debits.map((d) => d.reference)).size, debits.length);
  const { rows: [intervals] } = await pool.query<{ n: string; starts: string }>('SELECT count(*) AS n, count(DISTINCT starts_at) AS starts FROM usage_interval WHERE organization_id = $1', [tenant.organizationId]);
  t.is(intervals!.n, intervals!.starts);

  // What a user reads: the ledger's debits, and this period's usage of the deleted deployment, to the cent.
  const credits = await kiln.request('GET', `/v1/credits?orgId=${tenant.organizationId}&kind=debit&limit=100`, { token: tenant.token });
  t.is(credits.status, 200);
  t.is(credits.body.totals.debitedCents, -debits.reduce((sum, d) => sum + d.amount_cents, 0));
  const usage = await kiln.request('GET', '/api/billing/usage', { token: tenant.token });
  const row = usage.body.data.deployments.find((d: { deploymentId: string }) => d.deploymentId === coder!.id);
  t.is(row.costCents, unitsToCents(Number(charged!.units)));
  t.log(`coder ran ${(expectedGpuMs / 1000).toFixed(1)} GPU-seconds over ${events.length} running/stopped/scaled edges; ${debits.length} debits, ${credits.body.totals.debitedCents} cents drawn`);
});
