// Model servers for the inference tests: stand-ins answering vLLM's OpenAI API, each on a loopback address of
// its own that a Pod object of a real local cluster names as its IP. The pods are never scheduled; their status
// is written here (Ready, podIP), so the gateway's discovery is real and nothing else runs them.
import { randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { eventually } from './eventually.ts';

/** The container port the fake pods name `http` (not vLLM's 8000: the cluster's simulator may answer there). */
export const MODEL_PORT = 18080;

export interface Received {
  readonly path: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the request body as sent, read freely
  readonly body: any;
  /** Resolves when the gateway's connection for this request closes. */
  readonly closed: Promise<void>;
}

export type Answer = (received: Received, res: ServerResponse) => void | Promise<void>;

export interface FakeModelServer {
  readonly address: string;
  readonly received: Received[];
  /** Requests received and not yet closed. */
  open(): number;
  /** Stops listening and drops its connections: nothing answers at its address any more. */
  close(): Promise<void>;
}

export const USAGE = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };

/**
 * Answers as vLLM does: a chat.completion or text_completion, or with `stream` its chunks ("Hel", "lo", " there")
 * then, when asked for, the usage-only chunk, then [DONE]. `afterFirstChunk` holds the rest of a stream back.
 */
export function vllmAnswer(options: { afterFirstChunk?: () => Promise<void> } = {}): Answer {
  return async ({ path, body }, res) => {
    const chat = path === '/v1/chat/completions';
    const base = { id: 'cmpl-test', created: 1_700_000_000, model: body.model };
    if (!body.stream) {
      const choice = chat ? { index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' } : { index: 0, text: 'Hello there', finish_reason: 'stop' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...base, object: chat ? 'chat.completion' : 'text_completion', choices: [choice], usage: USAGE }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const object = chat ? 'chat.completion.chunk' : 'text_completion';
    const event = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const piece = (text: string) => event({ ...base, object, choices: [chat ? { index: 0, delta: { content: text }, finish_reason: null } : { index: 0, text, finish_reason: null }] });
    piece('Hel');
    await options.afterFirstChunk?.();
    if (res.destroyed) return;
    piece('lo');
    piece(' there');
    if (body.stream_options?.include_usage) event({ ...base, object, choices: [], usage: USAGE });
    res.end('data: [DONE]\n\n');
  };
}

/** Holds every request open without a word (until the gateway gives up). */
export const silent: Answer = () => {};

/**
 * Fake model servers and their pods on `gpuCluster`, at addresses 127.<octet>.<random>.<n>: loopback, outside the
 * ranges local clusters give their pods; each test file passes an octet of its own.
 */
export function createModelPods(gpuCluster: () => GpuCluster, octet: number) {
  const run = randomInt(256);
  let hosts = 0;
  let pods = 0;
  const fakeServers = new Set<Server>();

  /** A stand-in for one pod's vLLM server, on `address`:MODEL_PORT, answering as `answer` says (vLLM's way by default). */
  async function startFakeModelServer(address: string, answer: Answer = vllmAnswer()): Promise<FakeModelServer> {
    const received: Received[] = [];
    let open = 0;
    const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      open += 1;
      const closed = new Promise<void>((resolve) => res.once('close', () => { open -= 1; resolve(); }));
      const request: Received = { path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')), closed };
      received.push(request);
      await answer(request, res);
    });
    fakeServers.add(server);
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(MODEL_PORT, address, resolve));
    const close = () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return { address, received, open: () => open, close };
  }

  /**
   * A pod of the deployment as the vllm-deployment stack labels it, Ready at `address` unless `ready` is false.
   * Never scheduled (no scheduler serves its schedulerName), so the status written here stays.
   */
  async function podOf(deployment: { organizationId: string; name: string }, address: string, options: { ready?: boolean } = {}) {
    const name = await unreadyPodOf(deployment);
    if (options.ready ?? true) await markReady(namespaceOf(deployment.organizationId), name, address);
    return name;
  }

  /** A pod of the deployment whose status says nothing yet (as a pod just created). */
  async function unreadyPodOf(deployment: { organizationId: string; name: string }) {
    const namespace = namespaceOf(deployment.organizationId);
    await gpuCluster().api.ensure('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    const name = `${deployment.name}-${++pods}`;
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name, labels: { 'app.kubernetes.io/name': 'vllm', 'app.kubernetes.io/instance': deployment.name } },
      spec: { schedulerName: 'kiln-test-unscheduled', containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0', ports: [{ name: 'http', containerPort: MODEL_PORT }] }] },
    };
    // A new namespace's default service account, which pods need, comes from the controller manager shortly.
    await eventually(`pod ${name} created`, () => gpuCluster().api.request('POST', `/api/v1/namespaces/${namespace}/pods`, pod).then(() => true, () => false), 30_000);
    return name;
  }

  /** What the kubelet writes once the pod's readiness probe passes. */
  async function markReady(namespace: string, pod: string, address: string) {
    await gpuCluster().api.request('PATCH', `/api/v1/namespaces/${namespace}/pods/${pod}/status`, {
      status: { phase: 'Running', podIP: address, podIPs: [{ ip: address }], conditions: [{ type: 'Ready', status: 'True' }] },
    }, 'application/merge-patch+json');
  }


  return {
    nextAddress: () => `127.${octet}.${run}.${++hosts}`,
    startFakeModelServer,
    podOf,
    unreadyPodOf,
    markReady,
    /** Stops every fake model server started. */
    closeAll: () => Promise.all([...fakeServers].map((s) => new Promise((resolve) => s.close(resolve)))),
  };
}
