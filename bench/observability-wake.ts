// Wake from zero (part of `npm run bench:observability`): seconds from an inference request to a deployment
// scaled to zero until its first streamed token, on the local cluster (everything npm start runs: the wake
// signal, the workflow's `pulumi up`, the pod's scheduling and readiness, the gateway holding the request).
// Baseline, in the same run: the first token of the same request to the deployment once it runs.
// Run: node bench/observability-wake.ts
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { startBenchStack } from './support/bench-stack.ts';

const WAKES = Number(process.env.BENCH_WAKES ?? 5);
const WARM_REQUESTS = Number(process.env.BENCH_WARM_REQUESTS ?? 20);

// No Prometheus runs here: the autoscaler's readings fail and are skipped (the user scales to zero between wakes).
process.env.LOG_LEVEL ??= 'error';
const stack = await startBenchStack('bench-wake', [{ gpuType: 'nvidia-l4', nodes: 2, gpusPerNode: 1 }]);
const { call, newOrganization } = stack;
const { token, organizationId } = await newOrganization('wake');
// The growth plan's rate limit: the bench polls the deployment's status between wakes.
const database = new pg.Client({ connectionString: stack.databaseUrl });
await database.connect();
await database.query(`UPDATE organization SET plan = 'growth' WHERE id = $1`, [organizationId]);
await database.end();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, id: string, holds: (d: { status: string; currentReplicas: number }) => boolean, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { status, body } = await call('GET', `/api/deployments/${id}`, token);
    if (status === 200 && holds(body.data)) return;
    if (status === 200 && body.data.status === 'failed') throw new Error(`${what}: the deployment failed: ${body.data.failureReason}`);
    await sleep(status === 429 ? 2000 : 250);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Milliseconds from sending a streamed chat request to the first chunk carrying generated text. */
async function firstToken(id: string): Promise<number> {
  const began = performance.now();
  const response = await fetch(`${stack.apiUrl}/v1/inference`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ deployment: id, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16, stream: true }),
  });
  if (response.status !== 200) throw new Error(`inference answered ${response.status}: ${await response.text()}`);
  let text = '';
  let at: number | undefined;
  for await (const chunk of response.body!) {
    text += Buffer.from(chunk).toString();
    if (at === undefined && /"content":"[^"]/.test(text)) at = performance.now() - began;
  }
  if (at === undefined) throw new Error('the stream carried no token');
  return at;
}

const created = await call('POST', '/api/deployments', token, {
  name: 'sleepy', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 0, minReplicas: 0, maxReplicas: 1,
  // Scaled to zero here by the user between wakes, never by idleness.
  autoscaling: { scaleToZeroAfterSeconds: 3600 },
});
if (created.status !== 201) throw new Error(`creation answered ${created.status}: ${JSON.stringify(created.body)}`);
const id = created.body.data.id as string;

const wakes: number[] = [];
for (let i = 0; i < WAKES; i++) {
  await until('scaled to zero', id, (d) => d.status === 'scaled_to_zero' && d.currentReplicas === 0);
  wakes.push(await firstToken(id));
  await until('running after the wake', id, (d) => d.status === 'running');
  const warm = await call('POST', `/v1/deployments/${id}/actions`, token, { action: 'scale', replicas: 0 });
  if (warm.status !== 200) throw new Error(`scale to zero answered ${warm.status}: ${JSON.stringify(warm.body)}`);
}
await until('scaled to zero', id, (d) => d.status === 'scaled_to_zero');
await firstToken(id);
await until('running', id, (d) => d.status === 'running');
const warm: number[] = [];
for (let i = 0; i < WARM_REQUESTS; i++) warm.push(await firstToken(id));

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const seconds = (ms: number) => Number((ms / 1000).toFixed(2));
console.table([
  { title: 'baseline: first token from the running deployment', requests: warm.length, 'median s': seconds(median(warm)), 'worst s': seconds(Math.max(...warm)) },
  { title: 'first token from zero replicas (wake, pulumi up, pod Ready, held request)', requests: wakes.length, 'median s': seconds(median(wakes)), 'worst s': seconds(Math.max(...wakes)) },
]);
console.log(`wake-from-zero to the first token: median ${seconds(median(wakes))} s (each: ${wakes.map((w) => seconds(w)).join(', ')} s); no request was refused while waking`);
await stack.stop();
