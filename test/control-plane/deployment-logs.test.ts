// GET /v1/deployments/{id}/logs over HTTP (input rules, credentials, another organization, a cluster Kiln
// cannot reach: 503 with Retry-After), and the service on a cluster API stand-in (how pods' lines are merged,
// bounded and followed, and that a follow's requests to the cluster stop with it). The real pod-log API, on the
// local cluster with the simulated model servers, is tested end to end (test/e2e/lifecycle.test.ts).
import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Readable } from 'node:stream';
import { KubeApiError, type KubeApi } from '../../lib/kubernetes/api.ts';
import type { GpuClusterRecord } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import { ServiceUnavailableError, ValidationError } from '../../control-plane/core/errors.ts';
import { DeploymentLogsQuery } from '../../control-plane/deployment-logs/schemas.ts';
import { createDeploymentLogsService, type LogTarget } from '../../control-plane/deployment-logs/service.ts';
import { createApiKey, signup, signupWithDeployment, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

test('the test cluster has no kubeconfig: 503 with Retry-After in the reference error format, never a 500', async (t) => {
  const { token, organizationId, id } = await signupWithDeployment(api);
  for (const query of ['', '&follow=true']) {
    const res = await api.request('GET', `/v1/deployments/${id}/logs?orgId=${organizationId}${query}`, { token });
    t.is(res.status, 503, query);
    t.is(res.headers.get('retry-after'), '5');
    t.like(res.body, { code: 'SERVICE_UNAVAILABLE', message: 'The GPU cluster serving deployment llama-chat has no kubeconfig yet', statusCode: 503 });
  }
});

test('tail is 1 to 10,000, since an ISO 8601 time, follow true or false, orgId required, nothing else', async (t) => {
  const { token, organizationId, id } = await signupWithDeployment(api);
  const path = (query: string) => `/v1/deployments/${id}/logs?orgId=${organizationId}&${query}`;
  for (const query of ['tail=0', 'tail=10001', 'tail=ten', 'tail=1.5', 'since=yesterday', 'since=1700000000', 'follow=yes', 'pod=', 'lines=5']) {
    const res = await api.request('GET', path(query), { token });
    t.is(res.status, 400, query);
    t.is(res.body.code, 'INVALID_REQUEST', query);
  }
  t.is((await api.request('GET', path('tail=0'), { token })).body.message, 'Invalid query parameter tail: Too small: expected number to be >=1');
  t.is((await api.request('GET', `/v1/deployments/${id}/logs`, { token })).body.message, 'Invalid query parameter orgId: required');
  // Well-formed, the request goes on to the cluster (which has no kubeconfig here).
  t.is((await api.request('GET', path('tail=10000&since=2026-11-24T09:00:00.5%2B01:00&follow=false&pod=llama-chat-0'), { token })).status, 503);
});

test('another organization\'s deployment is 404; no credential 401; a read-only key and a deployments-only key may read', async (t) => {
  const owner = await signupWithDeployment(api);
  const other = await signup(api);
  const res = await api.request('GET', `/v1/deployments/${owner.id}/logs?orgId=${other.organizationId}`, { token: other.token });
  t.is(res.status, 404);
  t.is(res.body.code, 'DEPLOYMENT_NOT_FOUND');
  t.is((await api.request('GET', `/v1/deployments/dep_nosuchdeployment000/logs?orgId=${owner.organizationId}`, { token: owner.token })).status, 404);
  t.is((await api.request('GET', `/v1/deployments/${owner.id}/logs?orgId=${owner.organizationId}`)).status, 401);
  for (const scope of ['read_only', 'deployments_only'] as const) {
    const key = await createApiKey(api, owner.token, scope);
    // Authorized, then the cluster cannot be reached: 503, not 403.
    t.is((await api.request('GET', `/v1/deployments/${owner.id}/logs?orgId=${owner.organizationId}`, { token: key.key })).status, 503, scope);
  }
});

// The service on a stand-in for the cluster's API.

const cluster = { id: 'clu_standin', name: 'standin' } as GpuClusterRecord;
const target: LogTarget = { deploymentId: 'dep_standin', name: 'chat', namespace: 'kiln-org-x', cluster };
const query = (q: Record<string, string> = {}) => DeploymentLogsQuery.parse({ orgId: 'org_x', ...q });

interface Standin extends KubeApi {
  /** Paths asked for, in order. */
  readonly asked: string[];
  /** The signal of each log request, by pod. */
  readonly signals: Map<string, AbortSignal>;
}

/**
 * A cluster API whose pods `logs` names: each pod's lines (`<time> <text>`), or an error its log request
 * answers. A followed log gives its lines, then `live` lines one by one, then waits until aborted.
 */
function standin(logs: Record<string, string[] | Error>, options: { list?: Error; live?: Record<string, string[]> } = {}): Standin {
  const asked: string[] = [];
  const signals = new Map<string, AbortSignal>();
  const kube: Standin = {
    asked,
    signals,
    async get<T>(path: string): Promise<T> {
      asked.push(path);
      if (options.list) throw options.list;
      return { items: Object.keys(logs).map((name) => ({ metadata: { name } })) } as T;
    },
    request: () => Promise.reject(new Error('not used')),
    ensure: () => Promise.reject(new Error('not used')),
    async* lines(path: string, signal: AbortSignal) {
      asked.push(path);
      const pod = /\/pods\/([^/]+)\/log/.exec(path)![1]!;
      signals.set(pod, signal);
      const lines = logs[pod]!;
      if (lines instanceof Error) throw lines;
      const tail = Number(new URL(path, 'https://k').searchParams.get('tailLines'));
      yield* lines.slice(-tail);
      if (!path.includes('follow=true')) return;
      for (const line of options.live?.[pod] ?? []) {
        await sleep(20);
        yield line;
      }
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    },
  };
  return kube;
}

const service = (kube: KubeApi | null, options = {}) => createDeploymentLogsService({
  clusters: { kubernetesApi: () => kube },
  log: { warn: () => {} },
  options: { keepAliveMs: 60_000, ...options },
});

async function json(stream: Readable): Promise<Array<{ pod: string; time: string; line: string }>> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return JSON.parse(text);
}

const POD_LOGS = {
  'chat-a': ['2026-11-24T09:00:00.1Z INFO a1', '2026-11-24T09:00:00.3Z INFO a2', '2026-11-24T09:00:02Z INFO a3'],
  // Nanoseconds with the trailing zeros dropped, as kubelets write them: .25 is before .3, .123456789 after .1.
  'chat-b': ['2026-11-24T09:00:00.123456789Z INFO b1', '2026-11-24T09:00:00.25Z INFO b2'],
  'chat-c': ['2026-11-24T09:00:01.000000001Z INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK'],
};

test('the pods\' lines merged by time, oldest first; tail keeps the newest; since is exact; pod narrows; the pods are found by label', async (t) => {
  const kube = standin(POD_LOGS);
  const logs = service(kube);
  const all = await json((await logs.logs(target, query(), new AbortController().signal)).stream);
  t.deepEqual(all.map((l) => l.line.split(' ').at(-1) === 'OK' ? 'c1' : l.line.slice(5)), ['a1', 'b1', 'b2', 'a2', 'c1', 'a3']);
  t.deepEqual(all[4], { pod: 'chat-c', time: '2026-11-24T09:00:01.000000001Z', line: 'INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK' });
  t.is(kube.asked[0], '/api/v1/namespaces/kiln-org-x/pods?labelSelector=app.kubernetes.io%2Fname%3Dvllm%2Capp.kubernetes.io%2Finstance%3Dchat');
  t.is(kube.asked[1], '/api/v1/namespaces/kiln-org-x/pods/chat-a/log?container=vllm&timestamps=true&tailLines=100');

  const newest = await json((await logs.logs(target, query({ tail: '2' }), new AbortController().signal)).stream);
  t.deepEqual(newest.map((l) => l.line), [POD_LOGS['chat-c'][0]!.slice(31), 'INFO a3']);

  // The API takes whole seconds; the lines before the instant are left out here.
  const since = await json((await logs.logs(target, query({ since: '2026-11-24T10:00:00.2+01:00' }), new AbortController().signal)).stream);
  t.deepEqual(since.map((l) => l.line.slice(0, 7)), ['INFO b2', 'INFO a2', 'INFO:  ', 'INFO a3']);
  t.true(kube.asked.at(-1)!.endsWith('&sinceTime=2026-11-24T09%3A00%3A00Z'));

  const one = await json((await logs.logs(target, query({ pod: 'chat-b' }), new AbortController().signal)).stream);
  t.deepEqual(one.map((l) => l.pod), ['chat-b', 'chat-b']);
});

test('a pod not started yet or gone has no lines; a stopped deployment none; another pod\'s name is 422 naming pod', async (t) => {
  const waiting = new KubeApiError(400, 'GET', '/log', { message: 'container "vllm" in pod "chat-b" is waiting to start: ContainerCreating' });
  const logs = service(standin({ 'chat-a': POD_LOGS['chat-a'], 'chat-b': waiting, 'chat-c': new KubeApiError(404, 'GET', '/log', 'not found') }));
  t.is((await json((await logs.logs(target, query(), new AbortController().signal)).stream)).length, 3);

  const error = await t.throwsAsync(logs.logs(target, query({ pod: 'chat-z' }), new AbortController().signal), { instanceOf: ValidationError });
  t.deepEqual(error.details, { fields: [{ field: 'pod', message: 'chat-z is not a pod of deployment chat; its pods: chat-a, chat-b, chat-c' }] });

  t.deepEqual(await json((await service(standin({})).logs(target, query(), new AbortController().signal)).stream), []);
  // Never placed on a cluster: no pods anywhere.
  t.deepEqual(await json((await service(null).logs({ ...target, cluster: null }, query(), new AbortController().signal)).stream), []);
});

test('a cluster API that cannot be reached, refuses, or fails a log read is 503 with Retry-After', async (t) => {
  const refused = service(standin({}, { list: new Error('connect ECONNREFUSED 127.0.0.1:6443') }));
  const listing = await t.throwsAsync(refused.logs(target, query(), new AbortController().signal), { instanceOf: ServiceUnavailableError });
  t.is(listing.message, 'Kiln cannot reach the API of the GPU cluster serving deployment chat');
  t.deepEqual(listing.headers, { 'Retry-After': '5' });
  await t.throwsAsync(service(standin({}, { list: new KubeApiError(403, 'GET', '/pods', 'forbidden') })).logs(target, query(), new AbortController().signal),
    { instanceOf: ServiceUnavailableError });
  const failing = service(standin({ 'chat-a': POD_LOGS['chat-a'], 'chat-b': new KubeApiError(500, 'GET', '/log', 'kubelet unreachable') }));
  await t.throwsAsync(failing.logs(target, query(), new AbortController().signal),
    { instanceOf: ServiceUnavailableError, message: 'Kiln cannot read the pods\' logs from the GPU cluster serving deployment chat' });
  const unreadable = createDeploymentLogsService({ clusters: { kubernetesApi: () => { throw new Error('not YAML'); } }, log: { warn: () => {} } });
  await t.throwsAsync(unreadable.logs(target, query(), new AbortController().signal),
    { instanceOf: ServiceUnavailableError, message: 'The kubeconfig of the GPU cluster serving deployment chat cannot be read' });
});

async function* events(stream: Readable): AsyncGenerator<string> {
  let buffer = '';
  for await (const chunk of stream) {
    buffer += String(chunk);
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      yield buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
    }
  }
}

test('follow: each pod\'s newest lines, then new ones as events; the stream ends at its timeout and its cluster requests stop', async (t) => {
  const kube = standin({ 'chat-a': POD_LOGS['chat-a'], 'chat-b': POD_LOGS['chat-b'] }, { live: { 'chat-b': ['2026-11-24T09:05:00Z INFO new'] } });
  const reply = await service(kube, { followTimeoutMs: 500 }).logs(target, query({ follow: 'true', tail: '1' }), new AbortController().signal);
  t.is(reply.contentType, 'text/event-stream');
  t.is(reply.headers?.['Cache-Control'], 'no-cache');
  const seen: string[] = [];
  for await (const event of events(reply.stream)) seen.push(event);
  t.is(seen[0], ': following 2 pods of deployment chat');
  const data = seen.filter((e) => e.startsWith('data: ')).map((e) => JSON.parse(e.slice(6)) as { pod: string; line: string });
  t.deepEqual(data.map((d) => `${d.pod} ${d.line}`).sort(), ['chat-a INFO a3', 'chat-b INFO b2', 'chat-b INFO new']);
  t.is(seen.at(-1), 'event: end\ndata: {"reason":"timeout"}');
  t.true(kube.asked.every((path) => !path.includes('/log?') || path.includes('follow=true')));
  t.true([...kube.signals.values()].every((signal) => signal.aborted), 'the pods\' log requests are aborted');
});

test('follow: the client leaving aborts the requests to the cluster at once; a stream whose pods\' logs all close ends', async (t) => {
  const kube = standin({ 'chat-a': POD_LOGS['chat-a'] });
  const client = new AbortController();
  const reply = await service(kube).logs(target, query({ follow: 'true' }), client.signal);
  const reading = events(reply.stream);
  t.is((await reading.next()).value, ': following 1 pod of deployment chat');
  t.regex((await reading.next()).value as string, /^data: \{"pod":"chat-a"/);
  client.abort();
  t.true(kube.signals.get('chat-a')!.aborted);
  t.true(reply.stream.destroyed);

  const none = await service(standin({})).logs(target, query({ follow: 'true' }), new AbortController().signal);
  const seen: string[] = [];
  for await (const event of events(none.stream)) seen.push(event);
  t.deepEqual(seen, [': following 0 pods of deployment chat', 'event: end\ndata: {"reason":"ended"}']);
});
