// Kiln's inference gateway: sends a request to one of a deployment's model servers and hands back its
// answer. A cluster that names a gateway URL gets the request there; otherwise the gateway finds the
// deployment's Ready pods through the cluster's API (replicas.ts), picks the least busy (balancer.ts) and
// connects to the pod itself, trying the next replica when one cannot be reached.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ClusterInferenceAccess } from '../clusters/service.ts';
import { ReplicaUnavailableError, UpstreamError, UpstreamTimeoutError } from '../core/errors.ts';
import { createBalancer } from './balancer.ts';
import { createReplicaDirectory, type Replica } from './replicas.ts';
import { createAgents, postJson, SilenceError, UnreachableError } from './upstream.ts';

export interface InferenceGatewayOptions {
  /** A connection not made within this counts as unreachable (the next replica is tried). */
  readonly connectTimeoutMs: number;
  /** Silence allowed from the model server before its answer starts (504) and between two chunks of a stream. */
  readonly silenceTimeoutMs: number;
  /** A cluster and namespace's pod watch no request used for this long is stopped. */
  readonly watchIdleMs: number;
  /** A new pod watch must list within this (else 503). */
  readonly watchSyncTimeoutMs: number;
  /** Retry-After of a 503. */
  readonly retryAfterSeconds: number;
  /** How long a request for a deployment waking from zero is held for its first Ready replica (then 503). */
  readonly wakeTimeoutMs: number;
  /**
   * Addresses (a pod's IP, a gateway URL's host) the gateway may connect to; others count as unreachable.
   * Default: any. A machine whose private networks are off limits passes a loopback-only check.
   */
  readonly connectable: (address: string) => boolean;
}

export const DEFAULT_GATEWAY_OPTIONS: InferenceGatewayOptions = {
  connectTimeoutMs: 5_000,
  // A non-streamed answer says nothing until the whole completion is done.
  silenceTimeoutMs: 300_000,
  watchIdleMs: 10 * 60_000,
  watchSyncTimeoutMs: 10_000,
  retryAfterSeconds: 5,
  // A real vLLM downloads and loads weights before it is Ready: minutes for a large model.
  wakeTimeoutMs: 300_000,
  connectable: () => true,
};

/** Loopback only: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(address: string): boolean {
  const host = address.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** The deployment a request is for, and how its cluster is reached. */
export interface DeploymentTarget {
  readonly name: string;
  readonly namespace: string;
  readonly cluster: ClusterInferenceAccess;
  /** For a deployment that may run no replica (minReplicas 0): asks it to run one; the request is held until one is Ready. */
  readonly wake?: () => Promise<void>;
}

export interface UpstreamAnswer {
  /** Its headers have arrived, whatever the status; read it to the end or destroy it. */
  readonly response: IncomingMessage;
  /** The pod that answers, or `gateway`. */
  readonly replica: string;
}

/** How often a held request looks for a woken replica in the pod watch's cache (no request to the cluster). */
const WAKE_POLL_MS = 200;

export function createInferenceGateway(deps: { log: Pick<Logger, 'warn'>; options?: Partial<InferenceGatewayOptions> }) {
  const options = { ...DEFAULT_GATEWAY_OPTIONS, ...deps.options };
  const replicas = createReplicaDirectory({ log: deps.log, options: { idleMs: options.watchIdleMs, syncTimeoutMs: options.watchSyncTimeoutMs } });
  const balancer = createBalancer();
  const agents = createAgents();
  const timeouts = { connectMs: options.connectTimeoutMs, silenceMs: options.silenceTimeoutMs };

  const unavailable = (message: string) => new ReplicaUnavailableError(message, {}, { 'Retry-After': String(options.retryAfterSeconds) });

  /** What the client is told of a failure other than reaching no replica. */
  function failure(error: unknown, target: DeploymentTarget, signal: AbortSignal): unknown {
    if (signal.aborted) return signal.reason;
    if (error instanceof SilenceError) return new UpstreamTimeoutError(`The model server of deployment ${target.name} did not answer within ${Math.round(options.silenceTimeoutMs / 1000)} s`);
    return new UpstreamError(`The model server of deployment ${target.name} failed: ${(error as Error).message}`);
  }

  async function viaGateway(target: DeploymentTarget, gatewayUrl: string, path: string, body: Buffer, signal: AbortSignal): Promise<UpstreamAnswer> {
    const url = new URL(`${gatewayUrl.replace(/\/+$/, '')}/${encodeURIComponent(target.namespace)}/${encodeURIComponent(target.name)}${path}`);
    if (!options.connectable(url.hostname)) throw unavailable(`The gateway of the GPU cluster serving deployment ${target.name} is not reachable from Kiln`);
    try {
      return { response: await postJson(url, body, { agents, timeouts, signal }), replica: 'gateway' };
    } catch (error) {
      if (!(error instanceof UnreachableError) || signal.aborted) throw failure(error, target, signal);
      deps.log.warn({ err: error, clusterId: target.cluster.clusterId }, 'cluster gateway unreachable');
      throw unavailable(`The gateway of the GPU cluster serving deployment ${target.name} cannot be reached`);
    }
  }

  async function readyReplicas(target: DeploymentTarget, kubeconfig: string): Promise<Replica[]> {
    try {
      const ready = await replicas.ready({ clusterId: target.cluster.clusterId, kubeconfig }, target.namespace, target.name);
      return ready.filter((r) => options.connectable(r.address));
    } catch (error) {
      deps.log.warn({ err: error, clusterId: target.cluster.clusterId }, 'cannot list pods of a GPU cluster');
      throw unavailable(`Kiln cannot reach the API of the GPU cluster serving deployment ${target.name}`);
    }
  }

  /** Ready replicas of a waking deployment, once there are some; 503 past the deadline. */
  async function readyAfterWake(target: DeploymentTarget, kubeconfig: string, signal: AbortSignal, deadline: number): Promise<Replica[]> {
    for (;;) {
      const ready = await readyReplicas(target, kubeconfig);
      if (ready.length) return ready;
      if (signal.aborted) throw signal.reason;
      if (Date.now() >= deadline) throw unavailable(`Deployment ${target.name} is waking from zero replicas and none was ready within ${Math.round(options.wakeTimeoutMs / 1000)} s: try again shortly`);
      await sleep(WAKE_POLL_MS);
    }
  }

  /** Sends to the least busy of `ready`, trying the next when one cannot be reached; undefined when none can. */
  async function sendToOne(target: DeploymentTarget, ready: Replica[], path: string, body: Buffer, signal: AbortSignal): Promise<UpstreamAnswer | undefined> {
    const unreachable = new Set<Replica>();
    for (;;) {
      const replica = balancer.choose(ready.filter((r) => !unreachable.has(r)));
      if (!replica) return undefined;
      const done = balancer.begin(replica);
      const host = replica.address.includes(':') ? `[${replica.address}]` : replica.address;
      try {
        const response = await postJson(new URL(`http://${host}:${replica.port}${path}`), body, { agents, timeouts, signal });
        // In flight until its answer has been read ('end', before the client's answer ends, so the client's next
        // request finds this replica idle again) or dropped ('close').
        response.once('end', done).once('close', done);
        return { response, replica: replica.pod };
      } catch (error) {
        done();
        if (!(error instanceof UnreachableError) || signal.aborted) throw failure(error, target, signal);
        deps.log.warn({ err: error, pod: replica.pod, namespace: target.namespace }, 'replica unreachable; trying the next one');
        unreachable.add(replica);
      }
    }
  }

  /**
   * A deployment with no Ready replica that may wake (minReplicas 0) is woken, and the request held until a
   * replica is Ready and answers (a pod just Ready may not accept connections yet), the client leaves, or
   * wakeTimeoutMs passes (503 with Retry-After): a request is never dropped while its deployment wakes.
   */
  async function viaPods(target: DeploymentTarget, kubeconfig: string, path: string, body: Buffer, signal: AbortSignal): Promise<UpstreamAnswer> {
    let ready = await readyReplicas(target, kubeconfig);
    const waking = !ready.length && target.wake !== undefined;
    if (!waking) {
      if (!ready.length) throw unavailable(`Deployment ${target.name} has no ready replica`);
      const answer = await sendToOne(target, ready, path, body, signal);
      if (!answer) throw unavailable(`None of the ${ready.length} ready replicas of deployment ${target.name} can be reached`);
      return answer;
    }
    await target.wake!();
    const deadline = Date.now() + options.wakeTimeoutMs;
    for (;;) {
      ready = await readyAfterWake(target, kubeconfig, signal, deadline);
      const answer = await sendToOne(target, ready, path, body, signal);
      if (answer) return answer;
      if (Date.now() >= deadline) throw unavailable(`None of the ${ready.length} ready replicas of deployment ${target.name} can be reached`);
      await sleep(WAKE_POLL_MS);
    }
  }

  return {
    /** POSTs `body` to `path` (e.g. /v1/chat/completions) of one of the deployment's model servers. */
    send(target: DeploymentTarget, path: string, body: Buffer, signal: AbortSignal): Promise<UpstreamAnswer> {
      if (target.cluster.gatewayUrl) return viaGateway(target, target.cluster.gatewayUrl, path, body, signal);
      if (target.cluster.kubeconfig) return viaPods(target, target.cluster.kubeconfig, path, body, signal);
      return Promise.reject(unavailable(`The GPU cluster serving deployment ${target.name} has no kubeconfig or gateway yet`));
    },

    /** Stops the pod watches and closes kept-alive connections. */
    close(): void {
      replicas.close();
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

export type InferenceGateway = ReturnType<typeof createInferenceGateway>;
