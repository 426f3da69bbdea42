// A deployment's logs: its pods, found by label on its cluster's API, and each pod's log through the
// Kubernetes pod-log API (the kubelet's container log; on the local cluster, kwok serving what the simulated
// model servers write). Kiln keeps no logs of its own. A cluster that cannot be reached is a 503, never a 500.
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { modelServerLabels } from '../../catalog/model-server.ts';
import { KubeApiError, type KubeApi } from '../../lib/kubernetes/api.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import type { Principal } from '../auth/principal.ts';
import type { ClusterService } from '../clusters/service.ts';
import type { GpuClusterRecord } from '../clusters/gpu-cluster.entity.ts';
import { DeploymentNotFoundError, ServiceUnavailableError, invalidField } from '../core/errors.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import type { StreamReply } from '../http/routes.ts';
import type { DeploymentLogLineBody, DeploymentLogsInput } from './schemas.ts';

export interface DeploymentLogsOptions {
  /** A followed stream ends after this (the client reconnects with `since`): no request holds a connection forever. */
  readonly followTimeoutMs: number;
  /** Listing the pods, and reading their logs without follow, must be done within this (else 503). */
  readonly requestTimeoutMs: number;
  /** A comment is sent on a quiet stream this often, so proxies keep it open and a gone client is noticed. */
  readonly keepAliveMs: number;
  /** Retry-After of a 503. */
  readonly retryAfterSeconds: number;
}

export const DEFAULT_LOGS_OPTIONS: DeploymentLogsOptions = {
  followTimeoutMs: 5 * 60_000,
  requestTimeoutMs: 20_000,
  keepAliveMs: 15_000,
  retryAfterSeconds: 5,
};

/** Longer lines are cut here: an answer of 10,000 lines stays a few hundred megabytes at worst. */
const MAX_LINE_CHARS = 16_384;
/** Pods whose logs are read at once without follow; the answer keeps only the newest lines between batches. */
const READ_CONCURRENCY = 8;

/** The deployment whose logs are asked for, and the cluster serving it (null: it was never placed, so it has no pods). */
export interface LogTarget {
  readonly deploymentId: string;
  readonly name: string;
  readonly namespace: string;
  readonly cluster: GpuClusterRecord | null;
}

interface PodList { items?: Array<{ metadata?: { name?: string } }> }

/** `<RFC 3339 time> <line>`, as the pod-log API writes each line with timestamps=true. */
function parseLine(pod: string, raw: string): DeploymentLogLineBody | undefined {
  const space = raw.indexOf(' ');
  const time = space > 0 ? raw.slice(0, space) : '';
  if (Number.isNaN(Date.parse(time))) return undefined;
  const line = raw.slice(space + 1);
  return { pod, time, line: line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line };
}

/**
 * A sortable form of an RFC 3339 time: UTC milliseconds, then the fraction's digits past them (kubelets write
 * nanoseconds and drop trailing zeros, so the strings themselves do not sort).
 */
function timeKey(time: string): string {
  const fraction = /\.(\d+)/.exec(time)?.[1] ?? '';
  return `${String(Date.parse(time)).padStart(15, '0')}${fraction.slice(3).padEnd(6, '0')}`;
}

const byTime = (a: DeploymentLogLineBody & { key: string }, b: DeploymentLogLineBody & { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

export function createDeploymentLogsService(deps: {
  clusters: Pick<ClusterService, 'kubernetesApi'>;
  log: Pick<Logger, 'warn'>;
  options?: Partial<DeploymentLogsOptions>;
}) {
  const options = { ...DEFAULT_LOGS_OPTIONS, ...deps.options };
  const unavailable = (message: string) => new ServiceUnavailableError(message, {}, { 'Retry-After': String(options.retryAfterSeconds) });

  function clusterApi(target: LogTarget, cluster: GpuClusterRecord): KubeApi {
    let api: KubeApi | null;
    try {
      api = deps.clusters.kubernetesApi(cluster, { timeoutMs: options.requestTimeoutMs });
    } catch (error) {
      deps.log.warn({ err: error, clusterId: cluster.id }, 'the kubeconfig of a GPU cluster cannot be read');
      throw unavailable(`The kubeconfig of the GPU cluster serving deployment ${target.name} cannot be read`);
    }
    if (!api) throw unavailable(`The GPU cluster serving deployment ${target.name} has no kubeconfig yet`);
    return api;
  }

  /** The names of the deployment's pods, whatever their state (a pod not started yet has no log and is skipped when read). */
  async function podNames(api: KubeApi, target: LogTarget, clusterId: string): Promise<string[]> {
    const selector = Object.entries(modelServerLabels(target.name)).map(([key, value]) => `${key}=${value}`).join(',');
    try {
      const list = await api.get<PodList>(`/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods?labelSelector=${encodeURIComponent(selector)}`);
      return (list.items ?? []).flatMap((pod) => (pod.metadata?.name ? [pod.metadata.name] : [])).sort();
    } catch (error) {
      deps.log.warn({ err: error, clusterId }, 'cannot list pods of a GPU cluster');
      throw unavailable(`Kiln cannot reach the API of the GPU cluster serving deployment ${target.name}`);
    }
  }

  function logPath(target: LogTarget, pod: string, query: DeploymentLogsInput): string {
    const params = new URLSearchParams({ container: 'vllm', timestamps: 'true', tailLines: String(query.tail) });
    // The API takes whole seconds: the lines are filtered to the exact instant here.
    if (query.since) params.set('sinceTime', `${query.since.toISOString().slice(0, 19)}Z`);
    if (query.follow) params.set('follow', 'true');
    return `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(pod)}/log?${params}`;
  }

  /** Not yet started (400: its container is waiting) or gone since the list (404): a pod with no log to read. */
  const noLog = (error: unknown) => error instanceof KubeApiError && (error.status === 400 || error.status === 404);

  async function* podLines(api: KubeApi, target: LogTarget, pod: string, query: DeploymentLogsInput, signal: AbortSignal): AsyncGenerator<DeploymentLogLineBody> {
    try {
      for await (const raw of api.lines(logPath(target, pod, query), signal)) {
        const parsed = parseLine(pod, raw);
        if (parsed && (!query.since || Date.parse(parsed.time) >= query.since.getTime())) yield parsed;
      }
    } catch (error) {
      if (!noLog(error)) throw error;
    }
  }

  /** The newest `tail` lines across the pods, oldest first. */
  async function snapshot(api: KubeApi, target: LogTarget, pods: string[], query: DeploymentLogsInput, signal: AbortSignal): Promise<DeploymentLogLineBody[]> {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(options.requestTimeoutMs)]);
    let kept: Array<DeploymentLogLineBody & { key: string }> = [];
    for (let i = 0; i < pods.length; i += READ_CONCURRENCY) {
      const batch = await Promise.all(pods.slice(i, i + READ_CONCURRENCY).map(async (pod) => {
        const lines: Array<DeploymentLogLineBody & { key: string }> = [];
        for await (const line of podLines(api, target, pod, query, deadline)) lines.push({ ...line, key: timeKey(line.time) });
        return lines;
      })).catch((error: unknown) => {
        if (signal.aborted) throw signal.reason;
        deps.log.warn({ err: error, deploymentId: target.deploymentId }, 'cannot read pod logs from a GPU cluster');
        throw unavailable(`Kiln cannot read the pods' logs from the GPU cluster serving deployment ${target.name}`);
      });
      // `lines` ends quietly when its signal aborts: a timeout must not pass for a complete answer.
      if (signal.aborted) throw signal.reason;
      if (deadline.aborted) throw unavailable(`The GPU cluster serving deployment ${target.name} did not send the pods' logs within ${options.requestTimeoutMs / 1000} s`);
      // Stable: lines of the same instant keep their pod's order.
      kept = [...kept, ...batch.flat()].sort(byTime).slice(-query.tail);
    }
    return kept.map(({ key: _, ...line }) => line);
  }

  /**
   * Each pod's followed log as server-sent events, with backpressure (a slow client slows the reads). Ends at
   * the timeout, when every pod's log has closed, or when the client leaves; each way, the requests to the
   * cluster are aborted.
   */
  function follow(api: KubeApi, target: LogTarget, pods: string[], query: DeploymentLogsInput, signal: AbortSignal): Readable {
    const out = new PassThrough();
    const upstream = new AbortController();
    const timeout = setTimeout(() => finish('timeout'), options.followTimeoutMs);
    const keepAlive = setInterval(() => { if (!out.writableEnded) out.write(': keep-alive\n\n'); }, options.keepAliveMs);
    let finished = false;
    function finish(reason: 'timeout' | 'ended' | 'gone'): void {
      if (finished) return;
      finished = true;
      clearTimeout(timeout);
      clearInterval(keepAlive);
      upstream.abort();
      signal.removeEventListener('abort', gone);
      if (reason === 'gone') out.destroy();
      else out.end(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
    }
    const gone = () => finish('gone');
    signal.addEventListener('abort', gone, { once: true });
    // The client's answer closing (Koa destroys the body when the response ends) stops the reads too.
    out.once('close', gone);
    // Sent at once: the client sees the stream open before any pod writes.
    out.write(`: following ${pods.length} pod${pods.length === 1 ? '' : 's'} of deployment ${target.name}\n\n`);

    const readPod = async (pod: string) => {
      try {
        for await (const line of podLines(api, target, pod, query, upstream.signal)) {
          if (finished) return;
          if (!out.write(`data: ${JSON.stringify(line)}\n\n`)) await once(out, 'drain', { signal: upstream.signal });
        }
      } catch (error) {
        if (!upstream.signal.aborted) deps.log.warn({ err: error, pod, deploymentId: target.deploymentId }, 'a followed pod log broke off');
      }
    };
    void Promise.all(pods.map(readPod)).then(() => finish('ended'));
    return out;
  }

  return {
    /** The caller's deployment (404 when it is not theirs). */
    async target(em: EntityManager, principal: Principal, id: string): Promise<LogTarget> {
      const deployment = await em.findOne(DeploymentSchema, { id, organization: principal.organizationId, deletedAt: null }, { populate: ['cluster'] });
      if (!deployment) throw new DeploymentNotFoundError(`Deployment ${id} not found`);
      return {
        deploymentId: deployment.id, name: deployment.name, namespace: namespaceOf(principal.organizationId),
        cluster: deployment.cluster?.getEntity() ?? null,
      };
    },

    /** The lines as JSON, or with `follow` as an event stream. */
    async logs(target: LogTarget, query: DeploymentLogsInput, signal: AbortSignal): Promise<StreamReply> {
      const api = target.cluster ? clusterApi(target, target.cluster) : undefined;
      const pods = api ? await podNames(api, target, target.cluster!.id) : [];
      if (query.pod !== undefined && !pods.includes(query.pod)) {
        throw invalidField('pod', `${query.pod} is not a pod of deployment ${target.name}; its pods: ${pods.join(', ') || 'none'}`);
      }
      const selected = query.pod === undefined ? pods : [query.pod];
      if (query.follow) {
        return {
          stream: follow(api!, target, selected, query, signal),
          contentType: 'text/event-stream',
          headers: { 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
        };
      }
      const lines = api ? await snapshot(api, target, selected, query, signal) : [];
      return { stream: Readable.from([JSON.stringify(lines)]), contentType: 'application/json' };
    },
  };
}

export type DeploymentLogsService = ReturnType<typeof createDeploymentLogsService>;
