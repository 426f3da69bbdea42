// `npm run bench:inference`: the time Kiln's `POST /v1/inference` adds to the first token of a streamed chat
// completion, through the inference gateway (`node gateway/main.ts` processes) and through the API. Starts
// only what that path needs, under DATA_DIR (the cluster in DATA_DIR/bench-inference, emptied first): the API
// (control-plane/server.ts, on embedded PostgreSQL, through bench/support/bench-api.ts), two gateway processes
// on its database, the local GPU cluster with its simulated vLLM servers (infra/servers/gpu-cluster.ts), one
// deployment row placed on it and one pod kwok runs; no Temporal nor worker (nothing here changes a deployment).
// Baseline, in the same run: the same request sent straight to the pod's simulated server; and the floor under
// any gateway: the same request through a bare Node proxy process (bench/support/bare-proxy.ts).
// - One at a time, interleaved (direct, bare proxy, gateway, API key, session token, rotating the order), so all see the
//   same machine. Every request runs the whole of each chain: authentication, the rate limit (the tenant is on
//   the enterprise plan, far from its limits), permission, database scope, the audit record, metrics.
// - Concurrent streams, in rounds that alternate direct, the bare proxy, one gateway and two gateways: time to first token and
//   each stream's tokens per second, and the gateways' own CPU per request.
// - A thousand streams at once through one gateway: how many fail.
// Settings: BENCH_INFERENCE_REQUESTS (300 each way), BENCH_INFERENCE_TOKENS (8), BENCH_INFERENCE_WARMUP (30),
// BENCH_INFERENCE_CONCURRENCY (200), BENCH_INFERENCE_ROUNDS (3), BENCH_INFERENCE_STREAM_TOKENS (32),
// BENCH_INFERENCE_MANY (1000).
import { readFile, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { GPU_RESOURCE, GPU_TAINT, GPU_TYPE_LABEL } from '../catalog/gpu-types.ts';
import { modelServerLabels, VLLM_PORT, VLLM_PORT_NAME } from '../catalog/model-server.ts';
import { startGpuCluster } from '../infra/servers/gpu-cluster.ts';
import { namespaceOf } from '../workflows/contract/deployment.ts';
import { SIM_ANNOTATIONS } from '../infra/model-server-sim/pods.ts';
import { startBenchApi } from './support/bench-api.ts';
import { startBareProxy, type BareProxy } from './support/bare-proxy.ts';
import { startGatewayProcess, type GatewayProcess } from './support/gateway-processes.ts';
import { percentile, streamedCompletion } from './support/streamed-completion.ts';

const REQUESTS = Number(process.env.BENCH_INFERENCE_REQUESTS ?? 300);
const MAX_TOKENS = Number(process.env.BENCH_INFERENCE_TOKENS ?? 8);
const WARMUP = Number(process.env.BENCH_INFERENCE_WARMUP ?? 30);
const MODEL = 'Qwen/Qwen2.5-0.5B-Instruct';
const ADMIN_EMAIL = 'admin@bench.example';
const CONCURRENCY = Number(process.env.BENCH_INFERENCE_CONCURRENCY ?? 200);
const ROUNDS = Number(process.env.BENCH_INFERENCE_ROUNDS ?? 3);
const STREAM_TOKENS = Number(process.env.BENCH_INFERENCE_STREAM_TOKENS ?? 32);
const MANY = Number(process.env.BENCH_INFERENCE_MANY ?? 1000);

process.env.LOG_LEVEL ??= 'warn';
const clusterDir = resolve(process.env.DATA_DIR ?? '.data', 'bench-inference');
await rm(clusterDir, { recursive: true, force: true });
console.log(`bench-inference: cluster under ${clusterDir}`);
const [api, cluster] = await Promise.all([
  startBenchApi('inference', { KILN_ADMIN_EMAILS: ADMIN_EMAIL }),
  startGpuCluster({ dataDir: clusterDir, nodePools: [{ gpuType: 'nvidia-l4', nodes: 1, gpusPerNode: 1 }], podReadyDelayMs: 300 }),
]);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the bench reads answers freely
async function call(method: string, path: string, token?: string, body?: unknown): Promise<any> {
  const response = await fetch(api.url + path, {
    method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

const signUp = async (label: string, email = `${label}@bench.example`) => {
  const session = await call('POST', '/v1/auth/signup', undefined, { email, password: 'bench-password', name: label, organizationName: label });
  return { token: session.access_token as string, organizationId: session.user.organization_id as string };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Time to the first token alone: what this bench compares. */
const firstTokenMs = async (url: string, body: unknown, token?: string) => (await streamedCompletion(url, body, token)).ttft;

const gateways: GatewayProcess[] = [];
let bare: BareProxy | undefined;
try {
  // The cluster, registered by a platform administrator as in production.
  const admin = await signUp('admin', ADMIN_EMAIL);
  const registered = await call('POST', '/v1/admin/clusters', admin.token, { provider: 'kubernetes', name: 'local', kubeconfig: await readFile(cluster.kubeconfig, 'utf8') });
  const tenant = await signUp('tenant');
  const apiKey = (await call('POST', '/v1/settings/api-keys', tenant.token, { name: 'bench', scope: 'deployments_only' })).key as string;
  // A thousand streams at once are far below the enterprise plan's limits; the limiter still counts each.
  await api.pool.query(`UPDATE organization SET plan = 'enterprise' WHERE id = $1`, [tenant.organizationId]);
  gateways.push(...await Promise.all([startGatewayProcess(api), startGatewayProcess(api)]));

  // A running deployment on it, as the workflow would have left it (written here: no worker runs).
  const deploymentId = 'dep_benchinference';
  await api.pool.query(`
    INSERT INTO deployment (id, created_at, updated_at, organization_id, name, model, runtime, gpu, cluster_id, status, endpoint, replicas, min_replicas, max_replicas, current_replicas)
    VALUES ($1, now(), now(), $2, 'bench', $3, 'vllm', 'nvidia-l4', $4, 'running', 'https://bench.example', 1, 1, 1, 1)`,
  [deploymentId, tenant.organizationId, MODEL, registered.id]);
  // Its pod, labelled as the vllm-deployment stack labels it: scheduled for real, made Ready by kwok, and
  // answered on its IP by the model server simulator.
  const namespace = namespaceOf(tenant.organizationId);
  await cluster.api.ensure('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const pod = {
    apiVersion: 'v1', kind: 'Pod',
    // The simulated server generates for every stream at once, as a large vLLM batch would: what queues is Kiln's.
    metadata: { name: 'bench-0', labels: modelServerLabels('bench'), annotations: { [SIM_ANNOTATIONS.maxConcurrency]: String(Math.max(MANY, CONCURRENCY) * 2) } },
    spec: {
      nodeSelector: { [GPU_TYPE_LABEL]: 'nvidia-l4' },
      tolerations: [{ key: GPU_TAINT.key, operator: 'Equal', value: GPU_TAINT.value, effect: GPU_TAINT.effect }],
      containers: [{
        name: 'vllm', image: 'vllm/vllm-openai:v0.11.0', args: ['--model', MODEL, '--port', String(VLLM_PORT)],
        ports: [{ name: VLLM_PORT_NAME, containerPort: VLLM_PORT }], resources: { limits: { [GPU_RESOURCE]: '1' } },
      }],
    },
  };
  // A new namespace's default service account, which pods need, comes from the controller manager shortly.
  for (let deadline = Date.now() + 60_000; ; await sleep(250)) {
    try { await cluster.api.request('POST', `/api/v1/namespaces/${namespace}/pods`, pod); break; } catch (error) { if (Date.now() > deadline) throw error; }
  }
  let podIp: string | undefined;
  for (let deadline = Date.now() + 60_000; !podIp; await sleep(250)) {
    if (Date.now() > deadline) throw new Error('the pod never turned Ready');
    const seen = await cluster.api.get<{ status?: { podIP?: string; conditions?: { type: string; status: string }[] } }>(`/api/v1/namespaces/${namespace}/pods/bench-0`);
    if (seen.status?.podIP && seen.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) podIp = seen.status.podIP;
  }

  bare = await startBareProxy(`http://${podIp}:${VLLM_PORT}`);
  const messages = (i: number) => [{ role: 'user', content: `Request ${i}: summarise the history of the printing press.` }];
  const ways = {
    direct: (i: number) => firstTokenMs(`http://${podIp}:${VLLM_PORT}/v1/chat/completions`, { model: MODEL, messages: messages(i), max_tokens: MAX_TOKENS, stream: true }),
    'bare proxy': (i: number) => firstTokenMs(`${bare!.url}/v1/chat/completions`, { model: MODEL, messages: messages(i), max_tokens: MAX_TOKENS, stream: true }),
    gateway: (i: number) => firstTokenMs(`${gateways[0]!.url}/v1/inference`, { deployment: deploymentId, messages: messages(i), max_tokens: MAX_TOKENS, stream: true }, apiKey),
    'API key': (i: number) => firstTokenMs(`${api.url}/v1/inference`, { deployment: deploymentId, messages: messages(i), max_tokens: MAX_TOKENS, stream: true }, apiKey),
    'session token': (i: number) => firstTokenMs(`${api.url}/v1/inference`, { deployment: 'bench', messages: messages(i), max_tokens: MAX_TOKENS, stream: true }, tenant.token),
  };
  type Way = keyof typeof ways;
  const names = Object.keys(ways) as Way[];
  // The simulator may take a moment to serve a pod just Ready; then warm every path (connections, JIT, caches).
  for (let deadline = Date.now() + 30_000; ; await sleep(250)) {
    try { await ways.direct(0); break; } catch (error) { if (Date.now() > deadline) throw error; }
  }
  for (let i = 0; i < WARMUP; i++) for (const name of names) await ways[name](i);

  const ttft = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Way, number[]>;
  for (let i = 0; i < REQUESTS; i++) {
    // Each way goes first, second and third in turn: none always follows another's leftovers.
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length]!;
      ttft[name].push(await ways[name](i));
    }
  }

  const ps = [50, 90, 99];
  const row = (values: number[]) => ps.map((p) => `p${p} ${percentile(values, p).toFixed(2)} ms`).join(', ');
  console.log(`\nstreamed chat completions, ${REQUESTS} each way, one at a time, ${MAX_TOKENS} tokens; time to first token:`);
  for (const name of names) console.log(`  ${name.padEnd(14)} ${row(ttft[name])}`);
  for (const name of names.filter((n) => n !== 'direct')) {
    const added = ps.map((p) => `p${p} ${(percentile(ttft[name], p) - percentile(ttft.direct, p)).toFixed(2)} ms`).join(', ');
    if (name === 'bare proxy') console.log(`  added by a bare Node proxy process (the floor for any gateway here): ${added}`);
    else console.log(`  added by Kiln (${name}): ${added} (aim for the gateway: p50 <= 1 ms, p99 <= 5 ms)`);
  }

  // Concurrent streams: every stream of a round starts at once; rounds alternate the ways.
  const streamBody = (i: number) => ({ messages: messages(i), max_tokens: STREAM_TOKENS, stream: true });
  const direct = (i: number) => streamedCompletion(`http://${podIp}:${VLLM_PORT}/v1/chat/completions`, { model: MODEL, ...streamBody(i) });
  const through = (count: number) => (i: number) => streamedCompletion(`${gateways[i % count]!.url}/v1/inference`, { deployment: deploymentId, ...streamBody(i) }, apiKey);
  const viaBareProxy = (i: number) => streamedCompletion(`${bare!.url}/v1/chat/completions`, { model: MODEL, ...streamBody(i) });
  const concurrentWays = { direct, 'bare proxy': viaBareProxy, '1 gateway': through(1), '2 gateways': through(2) };
  type ConcurrentWay = keyof typeof concurrentWays;
  const seen = Object.fromEntries(Object.keys(concurrentWays).map((name) => [name, { ttft: [] as number[], tps: [] as number[], failed: 0, cpu: 0 }])) as Record<ConcurrentWay, { ttft: number[]; tps: number[]; failed: number; cpu: number }>;
  const gatewayCpu = async () => (await Promise.all(gateways.map((g) => g.cpuSeconds()))).reduce((a, b) => a + b, 0);
  const round = async (name: ConcurrentWay, streams: number) => {
    const cpuBefore = await gatewayCpu();
    const results = await Promise.allSettled(Array.from({ length: streams }, (_, i) => concurrentWays[name](i)));
    const entry = seen[name];
    entry.cpu += (await gatewayCpu()) - cpuBefore;
    for (const result of results) {
      if (result.status === 'fulfilled') {
        entry.ttft.push(result.value.ttft);
        entry.tps.push(result.value.tokensPerSecond);
      } else entry.failed += 1;
    }
  };
  const concurrentNames = Object.keys(concurrentWays) as ConcurrentWay[];
  for (const name of concurrentNames) await round(name, Math.min(CONCURRENCY, 20)); // warm
  for (const name of concurrentNames) Object.assign(seen[name], { ttft: [], tps: [], failed: 0, cpu: 0 });
  for (let r = 0; r < ROUNDS; r++) for (let j = 0; j < concurrentNames.length; j++) await round(concurrentNames[(r + j) % concurrentNames.length]!, CONCURRENCY);
  console.log(`\n${CONCURRENCY} concurrent streams, ${ROUNDS} rounds each way, ${STREAM_TOKENS} tokens each:`);
  const median = (values: number[]) => percentile(values, 50);
  for (const name of concurrentNames) {
    const { ttft: t, tps, failed, cpu } = seen[name];
    const vsDirect = name === 'direct' ? '' : `; added p50 ${(median(t) - median(seen.direct.ttft)).toFixed(2)} ms, p99 ${(percentile(t, 99) - percentile(seen.direct.ttft, 99)).toFixed(2)} ms`
      + `; tokens/s kept ${((100 * median(tps)) / median(seen.direct.tps)).toFixed(1)}%`
      + (name === 'bare proxy' ? '' : ` (aim >= 99%); gateway CPU ${((1000 * cpu) / (t.length + failed)).toFixed(2)} ms per stream`);
    console.log(`  ${name.padEnd(12)} time to first token ${row(t)}; tokens/s per stream median ${median(tps).toFixed(1)}; failed ${failed}${vsDirect}`);
  }

  // Many streams at once through one gateway: each must be answered whole.
  Object.assign(seen['1 gateway'], { ttft: [], tps: [], failed: 0, cpu: 0 });
  Object.assign(seen.direct, { ttft: [], tps: [], failed: 0, cpu: 0 });
  await round('direct', MANY);
  await round('1 gateway', MANY);
  const many = seen['1 gateway'];
  console.log(`\n${MANY} streams at once through one gateway: ${many.ttft.length} answered whole, ${many.failed} failed (aim: 0); time to first token ${row(many.ttft)} (direct: ${row(seen.direct.ttft)}, ${seen.direct.failed} failed); gateway CPU ${((1000 * many.cpu) / MANY).toFixed(2)} ms per stream`);
} finally {
  await Promise.all([...gateways.map((g) => g.stop()), bare?.stop()]);
  await api.close();
  await cluster.stop();
  await rm(clusterDir, { recursive: true, force: true });
}
