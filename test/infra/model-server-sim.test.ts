// The local cluster's simulated vLLM servers: a vLLM Deployment made straight through the Kubernetes API (as
// Kiln's stack makes it) gets, once its pod is Ready, an OpenAI-compatible server on the pod's IP and port 8000.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { GPU_RESOURCE, GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGpuCluster, TEST_NODE_POOLS } from '../support/gpu-cluster.ts';

const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
const FAILING_MODEL = 'kiln-test/never-loads';

interface Pod {
  metadata: { name: string; uid: string; namespace: string };
  status: {
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number; state?: { waiting?: { reason?: string } } }[];
  };
}

let cluster: GpuCluster;
test.before(async () => {
  // Throughput lines every second instead of vLLM's ten, so the log test sees them.
  cluster = await startTestGpuCluster(TEST_NODE_POOLS, { failingModels: [FAILING_MODEL], modelServers: { statsIntervalMs: 1000 } });
});
test.after.always(() => cluster?.stop());

/** A Deployment shaped like stacks/vllm-deployment's: its labels, container, arguments, port and probes. */
function vllmDeployment(name: string, model = MODEL, annotations: Record<string, string> = {}) {
  const labels = { 'app.kubernetes.io/name': 'vllm', 'app.kubernetes.io/instance': name };
  const health = { httpGet: { path: '/health', port: 8000 } };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default', labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, annotations },
        spec: {
          nodeSelector: { [GPU_TYPE_LABEL]: 'nvidia-h100-80gb' },
          tolerations: [{ key: GPU_TAINT.key, operator: 'Equal', value: GPU_TAINT.value, effect: GPU_TAINT.effect }],
          containers: [{
            name: 'vllm',
            image: 'vllm/vllm-openai:v0.11.0',
            args: ['--model', model, '--tensor-parallel-size', '1', '--port', '8000', '--max-model-len', '4096'],
            ports: [{ name: 'http', containerPort: 8000 }],
            resources: { limits: { [GPU_RESOURCE]: '1' } },
            readinessProbe: health,
            livenessProbe: health,
          }],
        },
      },
    },
  };
}

const isReady = (pod: Pod) => pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function podsOf(name: string): Promise<Pod[]> {
  const selector = encodeURIComponent(`app.kubernetes.io/instance=${name}`);
  return (await cluster.api.get<{ items: Pod[] }>(`/api/v1/namespaces/default/pods?labelSelector=${selector}`)).items;
}

/** Creates the Deployment and answers its Ready pod. */
async function deploy(name: string, model = MODEL, annotations: Record<string, string> = {}): Promise<Pod> {
  await cluster.api.request('POST', '/apis/apps/v1/namespaces/default/deployments', vllmDeployment(name, model, annotations));
  return eventually(`a Ready pod of ${name}`, async () => (await podsOf(name)).find(isReady));
}

/** The pod's server (its IP, port 8000) answers, or undefined while nothing listens there. */
async function answers(pod: Pod): Promise<boolean | undefined> {
  try {
    return (await fetch(`http://${pod.status.podIP}:8000/health`)).ok;
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') return undefined;
    throw error;
  }
}

async function post(pod: Pod, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`http://${pod.status.podIP}:8000${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
}

/** The sum of a metric's samples whose labels include `labels` (e.g. `finished_reason="abort"`). */
async function metric(pod: Pod, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`http://${pod.status.podIP}:8000/metrics`)).text();
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** The data payloads of a server-sent event stream. */
function events(text: string): string[] {
  return text.split('\n\n').filter(Boolean).map((event) => event.replace(/^data: /, ''));
}

const chat = (content: string, extra: object = {}) => ({ model: MODEL, messages: [{ role: 'user', content }], ...extra });

test.serial('a Ready vLLM pod answers on its loopback IP: /health, and /v1/models names the model as vLLM does', async (t) => {
  const pod = await deploy('models');
  t.true(pod.status.podIP!.startsWith(cluster.podCidr.split('.').slice(0, 2).join('.') + '.'), `pod IP ${pod.status.podIP} in ${cluster.podCidr}`);
  t.true(await eventually('the server to answer', () => answers(pod)));
  const health = await fetch(`http://${pod.status.podIP}:8000/health`);
  t.is(health.status, 200);
  t.is(await health.text(), '');
  const models = await (await fetch(`http://${pod.status.podIP}:8000/v1/models`)).json() as { object: string; data: { id: string; object: string; owned_by: string; max_model_len: number; root: string }[] };
  t.is(models.object, 'list');
  t.like(models.data[0], { id: MODEL, object: 'model', owned_by: 'vllm', max_model_len: 4096, root: MODEL });
});

test.serial('a chat completion answers with usage; max_tokens cuts the answer; the same prompt gets the same answer', async (t) => {
  const [pod] = await podsOf('models');
  const res = await post(pod!, '/v1/chat/completions', chat('Tell me how a kiln fires pottery', { max_tokens: 5 }));
  t.is(res.status, 200);
  const body = await res.json() as { object: string; model: string; choices: { message: { role: string; content: string }; finish_reason: string }[]; usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } };
  t.like(body, { object: 'chat.completion', model: MODEL });
  t.is(body.choices[0]!.message.role, 'assistant');
  t.is(body.choices[0]!.finish_reason, 'length');
  t.is(body.usage.completion_tokens, 5);
  t.true(body.usage.prompt_tokens > 0);
  t.is(body.usage.total_tokens, body.usage.prompt_tokens + 5);

  const again = await (await post(pod!, '/v1/chat/completions', chat('Tell me how a kiln fires pottery', { max_tokens: 5 }))).json() as typeof body;
  t.is(again.choices[0]!.message.content, body.choices[0]!.message.content);
  const whole = await (await post(pod!, '/v1/chat/completions', chat('Tell me how a kiln fires pottery'))).json() as typeof body;
  t.is(whole.choices[0]!.finish_reason, 'stop', 'without max_tokens the answer ends on its own');
  t.true(whole.usage.completion_tokens > 5);
});

test.serial('a streamed chat completion sends vLLM\'s chunks, usage last when asked, then [DONE]; chunk and usage counts agree', async (t) => {
  const [pod] = await podsOf('models');
  const res = await post(pod!, '/v1/chat/completions', chat('Stream me an answer', { stream: true, stream_options: { include_usage: true } }));
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const data = events(await res.text());
  t.is(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { object: string; choices: { delta: { role?: string; content?: string }; finish_reason: string | null }[]; usage?: { completion_tokens: number; prompt_tokens: number; total_tokens: number } });
  t.true(chunks.every((c) => c.object === 'chat.completion.chunk'));
  t.deepEqual(chunks[0]!.choices[0]!.delta, { role: 'assistant', content: '' });
  const usage = chunks.at(-1)!;
  t.deepEqual(usage.choices, []);
  const content = chunks.slice(1, -1);
  t.is(usage.usage!.completion_tokens, content.length, 'one chunk per generated token');
  t.is(usage.usage!.total_tokens, usage.usage!.prompt_tokens + content.length);
  t.is(content.at(-1)!.choices[0]!.finish_reason, 'stop');
  t.true(content.slice(0, -1).every((c) => c.choices[0]!.finish_reason === null));

  const plain = await (await post(pod!, '/v1/chat/completions', chat('Stream me an answer'))).json() as { choices: { message: { content: string } }[] };
  t.is(content.map((c) => c.choices[0]!.delta.content).join(''), plain.choices[0]!.message.content, 'streamed and whole answers are the same text');

  const completions = events(await (await post(pod!, '/v1/completions', { model: MODEL, prompt: 'Once upon a time', max_tokens: 3, stream: true })).text());
  t.is(completions.length, 4, 'three token chunks and [DONE], no usage unless asked');
  t.like(JSON.parse(completions[2]!), { object: 'text_completion', choices: [{ finish_reason: 'length' }] });
});

test.serial('bad requests are refused as vLLM refuses them: 404 for another model, 400 for a bad body or too many tokens', async (t) => {
  const [pod] = await podsOf('models');
  const wrongModel = await post(pod!, '/v1/chat/completions', { ...chat('hi'), model: 'gpt-4o' });
  t.is(wrongModel.status, 404);
  t.deepEqual(await wrongModel.json(), { error: { message: 'The model `gpt-4o` does not exist.', type: 'NotFoundError', param: null, code: 404 } });

  for (const body of [{ model: MODEL }, chat('hi', { max_tokens: 0 }), chat('hi', { max_tokens: 100_000 }), chat('hi', { stream_options: { include_usage: true } })]) {
    const res = await post(pod!, '/v1/chat/completions', body);
    t.is(res.status, 400, JSON.stringify(body));
    t.like(await res.json(), { error: { type: 'BadRequestError', code: 400 } });
  }
  const notJson = await fetch(`http://${pod!.status.podIP}:8000/v1/completions`, { method: 'POST', body: '{' });
  t.is(notJson.status, 400);
});

test.serial('/metrics speaks vLLM\'s metric names, labelled with the model, and its counters rise with requests', async (t) => {
  const [pod] = await podsOf('models');
  const text = await (await fetch(`http://${pod!.status.podIP}:8000/metrics`)).text();
  for (const name of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc',
    'vllm:prompt_tokens_total', 'vllm:generation_tokens_total', 'vllm:request_success_total',
    'vllm:time_to_first_token_seconds_bucket', 'vllm:e2e_request_latency_seconds_bucket']) {
    t.true(text.split('\n').some((line) => line.startsWith(`${name}{`) && line.includes(`model_name="${MODEL}"`)), name);
  }
  const before = { prompt: await metric(pod!, 'vllm:prompt_tokens_total'), generated: await metric(pod!, 'vllm:generation_tokens_total'), done: await metric(pod!, 'vllm:request_success_total'), ttft: await metric(pod!, 'vllm:time_to_first_token_seconds_count') };
  const answer = await (await post(pod!, '/v1/completions', { model: MODEL, prompt: 'Count my tokens', max_tokens: 7 })).json() as { usage: { prompt_tokens: number } };
  t.is(await metric(pod!, 'vllm:generation_tokens_total'), before.generated + 7);
  t.is(await metric(pod!, 'vllm:prompt_tokens_total'), before.prompt + answer.usage.prompt_tokens);
  t.is(await metric(pod!, 'vllm:request_success_total', 'finished_reason="length"') + await metric(pod!, 'vllm:request_success_total', 'finished_reason="stop"'), before.done + 1);
  t.is(await metric(pod!, 'vllm:time_to_first_token_seconds_count'), before.ttft + 1);
});

test.serial('requests beyond a replica\'s concurrency wait: num_requests_waiting counts them and they answer later', async (t) => {
  // One request at a time, 10 tokens of 40 ms each: about 0.4 s per request, served one after another.
  const pod = await deploy('busy', MODEL, { 'sim.kiln.dev/max-concurrency': '1', 'sim.kiln.dev/token-ms': '40', 'sim.kiln.dev/ttft-ms': '40' });
  await eventually('the server to answer', () => answers(pod));
  const started = Date.now();
  const requests = Array.from({ length: 3 }, () => post(pod, '/v1/completions', { model: MODEL, prompt: 'queue me', max_tokens: 10 }).then(async (res) => {
    await res.json();
    return Date.now() - started;
  }));
  const waiting = await eventually('waiting requests', async () => (await metric(pod, 'vllm:num_requests_waiting')) || undefined);
  t.true(waiting >= 1);
  t.is(await metric(pod, 'vllm:num_requests_running'), 1);
  const times = (await Promise.all(requests)).sort((a, b) => a - b);
  // Each request generates for at least 40 + 9 × 40 ms; the last waited for the two before it.
  t.true(times[2]! >= 3 * 400, `the last answered after ${times[2]} ms`);
  t.true(times[2]! - times[0]! >= 700, `first at ${times[0]} ms, last at ${times[2]} ms`);
  t.true(await metric(pod, 'vllm:request_queue_time_seconds_sum') >= 1, 'about 0.4 s and 0.8 s spent waiting');
});

test.serial('a client that disconnects mid-stream cancels its generation', async (t) => {
  const pod = await deploy('cancel', MODEL, { 'sim.kiln.dev/token-ms': '200' });
  await eventually('the server to answer', () => answers(pod));
  const abort = new AbortController();
  const res = await post(pod, '/v1/completions', { model: MODEL, prompt: 'a long story', max_tokens: 200, stream: true }, abort.signal);
  const reader = res.body!.getReader();
  await reader.read();
  t.is(await metric(pod, 'vllm:num_requests_running'), 1);
  abort.abort();
  await eventually('the generation to stop', async () => (await metric(pod, 'vllm:num_requests_running')) === 0);
  t.is(await metric(pod, 'vllm:request_success_total', 'finished_reason="abort"'), 1);
  t.true(await metric(pod, 'vllm:generation_tokens_total') < 20, 'far fewer than the 200 tokens asked for');
});

test.serial('each pod\'s vLLM log is written, one file per pod, and the API server serves it as the pod\'s log', async (t) => {
  const [pod] = await podsOf('models');
  const dir = (await readdir(cluster.podLogDir)).find((d) => d === `default_${pod!.metadata.name}_${pod!.metadata.uid}`);
  t.truthy(dir);
  const log = await eventually('a throughput line', async () => {
    const text = await readFile(join(cluster.podLogDir, dir!, 'vllm.log'), 'utf8');
    return /INFO .* Engine 000: Avg prompt throughput: [\d.]+ tokens\/s, Avg generation throughput: [\d.]+ tokens\/s, Running: \d+ reqs, Waiting: \d+ reqs/.test(text) && text;
  });
  t.regex(log, /^\S+Z stdout F INFO \d\d-\d\d \d\d:\d\d:\d\d \[[\w.]+:\d+\] vLLM API server version 0\.11\.0$/m);
  t.regex(log, /INFO .* Starting vLLM API server 0 on http:\/\/0\.0\.0\.0:8000/);
  t.regex(log, /INFO: {5}127\.0\.0\.1:\d+ - "POST \/v1\/chat\/completions HTTP\/1\.1" 200 OK/);
  t.regex(log, /INFO: {5}127\.0\.0\.1:\d+ - "POST \/v1\/chat\/completions HTTP\/1\.1" 404 Not Found/);

  // kwok serves the file as the container's log (GET .../pods/NAME/log, what kubectl logs reads).
  const served = await eventually('the pod log', () => cluster.api.get<string>(`/api/v1/namespaces/default/pods/${pod!.metadata.name}/log`).catch(() => undefined));
  t.regex(served, /^INFO \d\d-\d\d \d\d:\d\d:\d\d \[[\w.]+:\d+\] vLLM API server version 0\.11\.0$/m);
  t.regex(served, /^INFO: {5}127\.0\.0\.1:\d+ - "GET \/v1\/models HTTP\/1\.1" 200 OK$/m);
  const tail = await cluster.api.get<string>(`/api/v1/namespaces/default/pods/${pod!.metadata.name}/log?tailLines=1`);
  t.is(tail.trim().split('\n').length, 1);
});

test.serial('deleting the Deployment closes its pod\'s listener', async (t) => {
  const pod = await deploy('short-lived');
  t.true(await eventually('the server to answer', () => answers(pod)));
  await cluster.api.request('DELETE', '/apis/apps/v1/namespaces/default/deployments/short-lived');
  await eventually('the listener to close', async () => (await answers(pod)) === undefined);
  t.pass();
});

test.serial('a pod marked to fail (annotation or failing model) crash-loops: never Ready, restarts rising, nothing answers', async (t) => {
  for (const [name, model, annotations] of [['annotated-failure', MODEL, { 'sim.kiln.dev/fail': 'true' }], ['model-failure', FAILING_MODEL, {}]] as const) {
    await cluster.api.request('POST', '/apis/apps/v1/namespaces/default/deployments', vllmDeployment(name, model, annotations));
    const pod = await eventually(`${name} to restart twice`, async () => (await podsOf(name)).find((p) => (p.status.containerStatuses?.[0]?.restartCount ?? 0) >= 2));
    t.false(isReady(pod), name);
    t.like(pod.status.containerStatuses![0], { name: 'vllm', ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } } });
    t.truthy(pod.status.podIP);
    t.is(await answers(pod), undefined, `nothing listens on ${pod.status.podIP}:8000`);
    const log = await eventually(`${name}'s log`, () => cluster.api.get<string>(`/api/v1/namespaces/default/pods/${pod.metadata.name}/log`).catch(() => undefined));
    t.regex(log, /^ERROR .* EngineCore failed to start\.$/m, 'the log says why it never became Ready');
  }
});
