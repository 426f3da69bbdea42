// POST /v1/ai-assistant with `deploymentId`: one of the organization's running deployments writes the answer
// through the inference path. As in inference.test.ts, the gateway finds the deployment's Ready pods through a
// real local cluster's API, and the model server is a stand-in started here on a loopback address a Pod object
// names as its IP (the pod is never scheduled; its status is written here).
import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import test from 'ava';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { createStatusStore } from '../../workflows/deployment/status-store.ts';
import { signupAdmin } from '../support/admin.ts';
import { signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';

let api: TestApi;
let gpuCluster: GpuCluster;
const servers = new Set<Server>();

test.before(async () => {
  [api, gpuCluster] = await Promise.all([startTestApi(import.meta.filename, { defaultCluster: false }), startTestGpuCluster()]);
  const admin = (await signupAdmin(api)).token;
  const kubeconfig = await readFile(gpuCluster.kubeconfig, 'utf8');
  const registered = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'kubernetes', name: 'local', kubeconfig } });
  if (registered.status !== 201) throw new Error(`cluster registration failed: ${JSON.stringify(registered.body)}`);
});
test.after.always(async () => {
  await api?.close();
  await gpuCluster?.stop();
  await Promise.all([...servers].map((s) => new Promise((resolve) => s.close(resolve))));
});

/** The container port the fake pod names `http` (not vLLM's 8000: the cluster's simulator may answer there). */
const MODEL_PORT = 18081;
const RUN = randomInt(256);
let hosts = 0;

/** A stand-in for vLLM's streamed completion: `text` in two chunks, then [DONE]; or `status` as a failure. Keeps the prompts it got. */
async function modelServer(answer: { text: string } | { status: number }) {
  const address = `127.2.${RUN}.${++hosts}`;
  const prompts: string[] = [];
  const server = createServer(async (req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    prompts.push(body.prompt);
    if ('status' in answer) {
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'the model fell over' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const half = Math.ceil(answer.text.length / 2);
    for (const text of [answer.text.slice(0, half), answer.text.slice(half)]) {
      res.write(`data: ${JSON.stringify({ id: 'cmpl-test', object: 'text_completion', model: body.model, choices: [{ index: 0, text, finish_reason: null }] })}\n\n`);
    }
    res.write(`data: ${JSON.stringify({ id: 'cmpl-test', object: 'text_completion', model: body.model, choices: [], usage: { prompt_tokens: 50, completion_tokens: 9, total_tokens: 59 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  servers.add(server);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(MODEL_PORT, address, resolve));
  return { address, prompts };
}

/** An organization with a running deployment whose one Ready pod is the model server at `address`, and a failed one. */
async function runningDeployment(address: string) {
  const owner = await signup(api, 'assistant-model');
  const created = await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('writer') });
  if (created.status !== 201) throw new Error(`deployment: ${JSON.stringify(created.body)}`);
  await api.pool.query(`UPDATE deployment SET status = 'running' WHERE id = $1`, [created.body.id]);
  const failed = await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('broken') });
  await createStatusStore(api.orm).record({ deploymentId: failed.body.id, status: 'failed', event: 'deployment.failed', generation: 1, replicas: 0, failureReason: 'OOMKilled while loading weights' });

  const namespace = namespaceOf(owner.organizationId);
  await gpuCluster.api.ensure('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const pod = `writer-${hosts}`;
  await eventually(`pod ${pod} created`, () => gpuCluster.api.request('POST', `/api/v1/namespaces/${namespace}/pods`, {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: pod, labels: { 'app.kubernetes.io/name': 'vllm', 'app.kubernetes.io/instance': 'writer' } },
    spec: { schedulerName: 'kiln-test-unscheduled', containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0', ports: [{ name: 'http', containerPort: MODEL_PORT }] }] },
  }).then(() => true, () => false), 30_000);
  await gpuCluster.api.request('PATCH', `/api/v1/namespaces/${namespace}/pods/${pod}/status`, {
    status: { phase: 'Running', podIP: address, podIPs: [{ ip: address }], conditions: [{ type: 'Ready', status: 'True' }] },
  }, 'application/merge-patch+json');
  return { ...owner, id: created.body.id as string, failedId: failed.body.id as string };
}

test('a running deployment named as the model writes the answer from the cited material, which its prompt carries', async (t) => {
  const model = await modelServer({ text: 'It ran out of memory loading weights [1]; retry it on a larger GPU.' });
  const { token, id, failedId } = await runningDeployment(model.address);
  const res = await api.request('POST', '/v1/ai-assistant', { token, body: { question: `Why did ${failedId} fail?`, deploymentId: 'writer' } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.mode, 'model');
  t.deepEqual(res.body.model, { deploymentId: id, name: 'writer', error: null });
  t.is(res.body.answer, 'It ran out of memory loading weights [1]; retry it on a larger GPU.');
  t.true(res.body.citations.some((c: { type: string; id: string }) => c.type === 'deployment' && c.id === failedId));
  // The prompt held the question and the material the citations name.
  t.is(model.prompts.length, 1);
  t.true(model.prompts[0]!.includes(`Question: Why did ${failedId} fail?`));
  t.true(model.prompts[0]!.includes('[1] Deployment broken'));
  t.true(model.prompts[0]!.includes('OOMKilled while loading weights'));
  // The conversation keeps which deployment wrote the answer.
  const listed = await api.request('GET', '/v1/ai-assistant', { token });
  t.is(listed.body.conversations[0].messages[1].modelDeploymentId, id);
});

test('a model server that fails leaves retrieval\'s answer, saying why', async (t) => {
  const model = await modelServer({ status: 500 });
  const { token, id, failedId } = await runningDeployment(model.address);
  const res = await api.request('POST', '/v1/ai-assistant', { token, body: { question: `Why did ${failedId} fail?`, deploymentId: id } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.mode, 'retrieval');
  t.like(res.body.model, { deploymentId: id, name: 'writer' });
  t.regex(res.body.model.error, /failed \(500\): the model fell over/);
  t.true(res.body.answer.includes('OOMKilled while loading weights'));
});

test('another organization cannot use the deployment as its model', async (t) => {
  const model = await modelServer({ text: 'never' });
  const { id } = await runningDeployment(model.address);
  const other = await signup(api, 'assistant-model-other');
  const res = await api.request('POST', '/v1/ai-assistant', { token: other.token, body: { question: 'hello there', deploymentId: id } });
  t.is(res.status, 404);
  t.is(model.prompts.length, 0);
});
