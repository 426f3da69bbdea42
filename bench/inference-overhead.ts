// `npm run bench:inference`: the time Kiln's `POST /v1/inference` adds to the first token of a streamed chat
// completion. Starts only what that path needs, under DATA_DIR (the cluster in DATA_DIR/bench-inference,
// emptied first): the API (control-plane/server.ts, on embedded PostgreSQL, through bench/support/bench-api.ts),
// the local GPU cluster with its simulated vLLM servers (infra/servers/gpu-cluster.ts), one deployment row
// placed on it and one pod kwok runs; no Temporal nor worker (nothing here changes a deployment).
// Baseline, in the same run: the same request sent straight to the pod's simulated server. Requests go one
// at a time, interleaved (direct, API key, session token, rotating the order), so all three see the same
// machine. Every request runs the whole of Kiln's chain: authentication, the rate limiter's count (limits
// lifted, the statement still runs), permission, database scope, the audit record, metrics.
// Settings: BENCH_INFERENCE_REQUESTS (300 each way), BENCH_INFERENCE_TOKENS (8), BENCH_INFERENCE_WARMUP (30).
import { readFile, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { GPU_RESOURCE, GPU_TAINT, GPU_TYPE_LABEL } from '../catalog/gpu-types.ts';
import { modelServerLabels, VLLM_PORT, VLLM_PORT_NAME } from '../catalog/model-server.ts';
import { startGpuCluster } from '../infra/servers/gpu-cluster.ts';
import { namespaceOf } from '../workflows/contract/deployment.ts';
import { startBenchApi } from './support/bench-api.ts';
import { percentile, streamedCompletion } from './support/streamed-completion.ts';

const REQUESTS = Number(process.env.BENCH_INFERENCE_REQUESTS ?? 300);
const MAX_TOKENS = Number(process.env.BENCH_INFERENCE_TOKENS ?? 8);
const WARMUP = Number(process.env.BENCH_INFERENCE_WARMUP ?? 30);
const MODEL = 'Qwen/Qwen2.5-0.5B-Instruct';
const ADMIN_EMAIL = 'admin@bench.example';

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

try {
  // The cluster, registered by a platform administrator as in production.
  const admin = await signUp('admin', ADMIN_EMAIL);
  const registered = await call('POST', '/v1/admin/clusters', admin.token, { provider: 'kubernetes', name: 'local', kubeconfig: await readFile(cluster.kubeconfig, 'utf8') });
  const tenant = await signUp('tenant');
  const apiKey = (await call('POST', '/v1/settings/api-keys', tenant.token, { name: 'bench', scope: 'deployments_only' })).key as string;

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
    metadata: { name: 'bench-0', labels: modelServerLabels('bench') },
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

  const messages = (i: number) => [{ role: 'user', content: `Request ${i}: summarise the history of the printing press.` }];
  const ways = {
    direct: (i: number) => firstTokenMs(`http://${podIp}:${VLLM_PORT}/v1/chat/completions`, { model: MODEL, messages: messages(i), max_tokens: MAX_TOKENS, stream: true }),
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
    console.log(`  added by Kiln (${name}): ${added} (aim: under 5 ms at p50)`);
  }
} finally {
  await api.close();
  await cluster.stop();
  await rm(clusterDir, { recursive: true, force: true });
}
