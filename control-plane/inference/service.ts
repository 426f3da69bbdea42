// Inference through Kiln: a request for one of the caller's running deployments goes to its model server
// (vLLM's OpenAI-compatible API) through the gateway, and the answer comes back as the server gives it,
// streamed chunk by chunk when asked. The tokens it carried are counted for the audit record.
import type { IncomingMessage } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import type { AuditDetails } from '../audit/service.ts';
import type { ClusterInferenceAccess, ClusterService } from '../clusters/service.ts';
import type { DeploymentStatus } from '../deployments/deployment.entity.ts';
import {
  ApiError, DeploymentNotFoundError, ServiceUnavailableError, DeploymentNotRunningError, InferenceRejectedError, ReplicaUnavailableError, UpstreamError, UpstreamTimeoutError,
} from '../core/errors.ts';
import type { StreamReply } from '../http/routes.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import type { DeploymentTarget, InferenceGateway, UpstreamAnswer } from './gateway.ts';
import { jsonRelay, sseRelay, type Relay, type RelayOutcome } from './relay.ts';
import type { InferenceInput, InferenceTestInput, InferenceTestResultBody } from './schemas.ts';
import { SilenceError } from './upstream.ts';
import type { DeploymentOrchestrator } from '../deployments/orchestrator.ts';
import type { DependencyMonitor } from '../health/dependencies.ts';

/**
 * Statuses in which a deployment serves: its Ready pods answer through a scale or an update, and one scaled to
 * zero is woken by the request, which waits for its first replica.
 */
const SERVING: readonly DeploymentStatus[] = ['running', 'scaling', 'updating', 'scaled_to_zero'];
/** Enough of a refusal to quote its message. */
const MAX_ERROR_BODY = 64 << 10;
/** Bounds the targets remembered for sending ahead of the lookup (oldest first out); a miss only costs the lookup's wait. */
const MAX_REMEMBERED = 1_000;

// The deployment and how its cluster is reached, in one statement: this lookup is on every inference's path
// to its first token, where the ORM's query building and hydration cost more than the round trip itself.
// Run on the request's EntityManager, so row-level security holds it to the caller's organization (as the
// explicit filter does); names are DNS labels (no underscore), so `dep_...` can only be an id.
const LOOKUP = (by: 'id' | 'name') => `
  SELECT d.id, d.name, d.model, d.status, d.min_replicas, c.id AS cluster_id, c.gateway_url, c.sealed_kubeconfig
  FROM deployment d LEFT JOIN gpu_cluster c ON c.id = d.cluster_id
  WHERE d.organization_id = ? AND d.${by} = ? AND d.deleted_at IS NULL
  LIMIT 1`;
const LOOKUP_BY_ID = LOOKUP('id');
const LOOKUP_BY_NAME = LOOKUP('name');

interface DeploymentRow {
  id: string;
  name: string;
  model: string;
  status: DeploymentStatus;
  min_replicas: number;
  cluster_id: string | null;
  gateway_url: string | null;
  sealed_kubeconfig: string | null;
}

/** A running deployment of the caller's, and how to reach it. */
export interface InferenceTarget extends DeploymentTarget {
  readonly deploymentId: string;
  /** The name vLLM serves the model under (its --model argument). */
  readonly model: string;
}

export interface InferenceServiceDeps {
  clusters: Pick<ClusterService, 'inferenceAccess'>;
  gateway: Pick<InferenceGateway, 'send'>;
  /** Signals a deployment's workflow to run a replica again (deployments/orchestrator.ts). */
  orchestrator: Pick<DeploymentOrchestrator, 'wake'>;
  /**
   * The inference gateway's, which serves while the database is away: lookups fail at once then
   * (DatabaseUnavailableError), and a request for a deployment this replica has resolved before goes where it
   * went last. Unset (the API, which answers 503 then): lookups run as they are.
   */
  database?: Pick<DependencyMonitor, 'whileAvailable'>;
  /**
   * The inference gateway's: a target this replica resolved less than this long ago answers for the lookup (a
   * lookup in the background refreshes it once it is half that old), so a request waits on no database round
   * trip; a deployment stopped, deleted or changed is seen within it. Unset (the API): each request's lookup
   * decides.
   */
  targetFreshMs?: number;
}

export function createInferenceService(deps: InferenceServiceDeps) {
  /** Each cluster's access as last opened: its kubeconfig is unsealed again only when its row changed. */
  const accessOf = new Map<string, { gatewayUrl: string | null; sealed: string | null; access: ClusterInferenceAccess }>();
  function clusterAccess(row: DeploymentRow & { cluster_id: string }): ClusterInferenceAccess {
    const known = accessOf.get(row.cluster_id);
    if (known && known.gatewayUrl === row.gateway_url && known.sealed === row.sealed_kubeconfig) return known.access;
    const access = deps.clusters.inferenceAccess({ id: row.cluster_id, gatewayUrl: row.gateway_url, sealedKubeconfig: row.sealed_kubeconfig });
    accessOf.set(row.cluster_id, { gatewayUrl: row.gateway_url, sealed: row.sealed_kubeconfig, access });
    return access;
  }

  /** The caller's deployment named by id or name: 404 when not theirs, 409 unless it serves. */
  async function target(em: EntityManager, principal: Principal, reference: string): Promise<InferenceTarget> {
    const query = () => em.getConnection().execute<DeploymentRow[]>(
      reference.startsWith('dep_') ? LOOKUP_BY_ID : LOOKUP_BY_NAME, [principal.organizationId, reference]);
    const [deployment] = await (deps.database ? deps.database.whileAvailable(query) : query());
    if (!deployment) throw new DeploymentNotFoundError(`Deployment ${reference} not found`);
    if (!SERVING.includes(deployment.status)) {
      throw new DeploymentNotRunningError(`Deployment ${deployment.name} is ${deployment.status}; inference needs it running`, { status: deployment.status });
    }
    const { cluster_id: clusterId } = deployment;
    if (clusterId === null) throw new ReplicaUnavailableError(`Deployment ${deployment.name} has no GPU cluster`);
    return {
      deploymentId: deployment.id, name: deployment.name, model: deployment.model,
      namespace: namespaceOf(principal.organizationId), cluster: clusterAccess({ ...deployment, cluster_id: clusterId }),
      // A deployment that may scale to zero is woken when the gateway finds no Ready replica.
      ...(deployment.min_replicas === 0 ? { wake: () => deps.orchestrator.wake(deployment.id) } : {}),
    };
  }

  /** A lookup that answered no (deleted, stopped, not the caller's), as against one the database could not answer. */
  const refused = (error: unknown) => error instanceof ApiError && !(error instanceof ServiceUnavailableError);

  /**
   * The target each organization's reference last resolved to on this replica. Never trusted on its own: a
   * request is sent to it while the lookup runs (run), and the lookup decides what the client gets.
   */
  const remembered = new Map<string, { target: InferenceTarget; resolvedAt: number; refreshing?: boolean }>();
  function remember(key: string, found: InferenceTarget): void {
    remembered.delete(key);
    if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
    remembered.set(key, { target: found, resolvedAt: performance.now() });
  }

  /** Looks `reference` up again in the background: the result replaces what is remembered, a refusal drops it. */
  function refresh(key: string, em: EntityManager, principal: Principal, reference: string): void {
    const entry = remembered.get(key)!;
    entry.refreshing = true;
    target(em, principal, reference).then((found) => remember(key, found), (error: unknown) => {
      if (remembered.get(key) !== entry) return;
      // Refused (deleted, stopped, not the caller's): forgotten. Unanswered (the database away, or a connection it
      // dropped on a restart): what this replica knew stands until it answers again.
      if (refused(error)) remembered.delete(key);
      else entry.refreshing = false;
    });
  }
  /** Whether a request sent to `guess` went where one sent to `found` would (a wake aside: see run). */
  const sameTarget = (guess: InferenceTarget, found: InferenceTarget) => guess.deploymentId === found.deploymentId && guess.name === found.name
    && guess.model === found.model && guess.namespace === found.namespace && guess.cluster === found.cluster;

  /** Sends `request` to `path` and answers once the model server has accepted it (a refusal is thrown). */
  async function accepted(target: InferenceTarget, path: string, request: Record<string, unknown>, signal: AbortSignal): Promise<UpstreamAnswer> {
    const answer = await deps.gateway.send(target, path, Buffer.from(JSON.stringify(request)), signal);
    const status = answer.response.statusCode ?? 502;
    if (status < 400) return answer;
    const message = await refusalMessage(answer.response).catch(() => '');
    const quoted = message ? `: ${message}` : '';
    if (status >= 500) throw new UpstreamError(`The model server of deployment ${target.name} failed (${status})${quoted}`);
    throw new InferenceRejectedError(`The model server refused the request (${status})${quoted}`, { upstreamStatus: status });
  }

  /**
   * Runs an OpenAI request on the target and relays the answer: JSON, or with `stream` the event stream
   * chunk by chunk with backpressure. The audit details (tokens) settle when the answer has ended.
   */
  async function infer(target: InferenceTarget, input: InferenceInput, signal: AbortSignal): Promise<StreamReply> {
    const { deployment: _, ...fields } = input;
    const stream = fields.stream === true;
    const request = {
      ...fields,
      model: fields.model ?? target.model,
      // Tokens are counted from the final chunk's usage, which vLLM sends only when asked.
      ...(stream ? { stream_options: { ...fields.stream_options, include_usage: true } } : {}),
    };
    const answer = await accepted(target, fields.messages ? '/v1/chat/completions' : '/v1/completions', request, signal);
    const relay = stream ? sseRelay({ stripUsageChunk: fields.stream_options?.include_usage !== true }) : jsonRelay();
    relayFrom(answer.response, relay);
    return {
      stream: relay.stream,
      contentType: stream ? 'text/event-stream' : 'application/json',
      headers: { 'X-Kiln-Replica': answer.replica, ...(stream ? { 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' } : {}) },
      readsNoDatabase: true,
      auditDetails: relay.outcome.then((outcome) => usageDetails(outcome, { stream, replica: answer.replica })),
    };
  }

  return {
    target,

    /**
     * POST /v1/inference: looks the caller's deployment up (target) and runs the request on it (infer), with
     * the lookup's round trip off the path to the first token. When this replica has resolved the same
     * reference for the same organization before, the request is sent to that target at once while the
     * lookup runs, and the lookup still decides: an error it finds (404, 409, no cluster) is the answer and the
     * early request is cancelled; a target that changed gets the request afresh. The client thus gets what
     * the lookup allows, as before; the model server may only see a request cancelled within the lookup's
     * round trip. The early request never wakes a deployment scaled to zero: the lookup's target does. While
     * the database is away (the gateway's `database`), the target last resolved decides instead of the lookup;
     * on the gateway, so does one resolved within `targetFreshMs`.
     * `located` is told the deployment as soon as the lookup finds it (the audit record names it).
     */
    async run(em: EntityManager, principal: Principal, input: InferenceInput, signal: AbortSignal, located: (target: InferenceTarget) => void): Promise<StreamReply> {
      const key = `${principal.organizationId}\u0000${input.deployment}`;
      const fresh = remembered.get(key);
      const age = fresh ? performance.now() - fresh.resolvedAt : Infinity;
      if (fresh && deps.targetFreshMs !== undefined && age < deps.targetFreshMs) {
        if (!fresh.refreshing && age >= deps.targetFreshMs / 2) refresh(key, em, principal, input.deployment);
        located(fresh.target);
        return infer(fresh.target, input, signal);
      }
      const lookup = target(em, principal, input.deployment).then((found) => {
        located(found);
        remember(key, found);
        return found;
      }, (error: unknown) => {
        // The database away: what this replica knew stands until it answers again.
        if (refused(error)) remembered.delete(key);
        throw error;
      });
      const guess = fresh?.target;
      if (!guess) return infer(await lookup, input, signal);

      const early = new AbortController();
      const cancel = (reason: unknown) => {
        early.abort(reason);
        // Already answering: its stream is dropped, which closes the model server's request.
        attempt.then((reply) => reply.stream.destroy(), () => {});
      };
      const { wake: _, ...withoutWake } = guess;
      const attempt = infer(withoutWake, input, AbortSignal.any([signal, early.signal]));
      attempt.catch(() => {}); // awaited below, unless the lookup says otherwise first
      let found: InferenceTarget;
      try {
        found = await lookup;
      } catch (error) {
        if (refused(error)) {
          cancel(error);
          throw error;
        }
        located(guess);
        found = guess;
      }
      if (!sameTarget(guess, found)) {
        cancel(new Error('the deployment changed: sent again to its current target'));
        return infer(found, input, signal);
      }
      try {
        return await attempt;
      } catch (error) {
        // No Ready replica for a deployment that may wake: what the early request could not do, the lookup's target does.
        if (found.wake && error instanceof ReplicaUnavailableError && !signal.aborted) return infer(found, input, signal);
        throw error;
      }
    },

    /** A short streamed completion: how long the model takes to its first token and to the end, and what it reports. */
    async test(target: InferenceTarget, input: InferenceTestInput, signal: AbortSignal): Promise<{ result: InferenceTestResultBody; auditDetails: AuditDetails }> {
      const started = performance.now();
      let firstTokenAt: number | undefined;
      let model: string | null = null;
      let output = '';
      const request = { model: target.model, prompt: input.prompt, max_tokens: input.maxTokens, stream: true, stream_options: { include_usage: true } };
      const answer = await accepted(target, '/v1/completions', request, signal);
      const relay = sseRelay({
        stripUsageChunk: false,
        onChunk: (chunk) => {
          const { model: reported, choices } = chunk as { model?: unknown; choices?: Array<{ text?: unknown }> };
          if (typeof reported === 'string') model ??= reported;
          const text = choices?.map((c) => (typeof c.text === 'string' ? c.text : '')).join('') ?? '';
          if (text) firstTokenAt ??= performance.now();
          output += text;
        },
      });
      relayFrom(answer.response, relay);
      try {
        for await (const chunk of relay.stream) void chunk;
      } catch (error) {
        throw streamFailure(error, target, signal);
      }
      const outcome = await relay.outcome;
      return {
        result: {
          deploymentId: target.deploymentId, model, replica: answer.replica,
          latencyMs: Math.round(performance.now() - started),
          timeToFirstTokenMs: firstTokenAt === undefined ? null : Math.round(firstTokenAt - started),
          tokens: { prompt: outcome.usage?.promptTokens ?? null, completion: outcome.usage?.completionTokens ?? null },
          output,
        },
        auditDetails: usageDetails(outcome, { stream: true, replica: answer.replica }),
      };
    },
  };
}

export type InferenceService = ReturnType<typeof createInferenceService>;

/**
 * Pipes the model server's answer through the relay; a failure on either side ends both (the client's stream is
 * cut off, the model server's request closed). Wired by hand rather than with stream.pipeline, whose internal
 * AbortController costs every answer a DOMException when it finishes.
 */
function relayFrom(response: IncomingMessage, relay: Relay): void {
  const { stream } = relay;
  response.once('error', (error) => stream.destroy(error));
  // Ended early without an error of its own: the client's stream must not wait for more.
  response.once('close', () => { if (!response.complete) stream.destroy(new Error('the model server closed its answer before its end')); });
  // Closed before the answer was whole (the client left, or the relay failed): the model server's request goes too.
  stream.once('close', () => { if (!response.complete) response.destroy(); });
  response.pipe(stream);
}

/** Why a probe's stream broke off, as the client is told it. */
function streamFailure(error: unknown, target: InferenceTarget, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (error instanceof SilenceError) return new UpstreamTimeoutError(`The model server of deployment ${target.name} fell silent: ${error.message}`);
  return new UpstreamError(`The model server of deployment ${target.name} broke its answer off: ${(error as Error).message}`);
}

function usageDetails(outcome: RelayOutcome, extra: { stream: boolean; replica: string }): AuditDetails {
  return {
    promptTokens: outcome.usage?.promptTokens ?? null,
    completionTokens: outcome.usage?.completionTokens ?? null,
    completed: outcome.completed,
    ...extra,
  };
}

/** The message of a model server's error answer: OpenAI's `{error: {message}}`, vLLM's `{message}`, FastAPI's `{detail}`, or the text. */
async function refusalMessage(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    size += (chunk as Buffer).length;
    if (size > MAX_ERROR_BODY) { response.destroy(); break; }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let body: { error?: { message?: unknown } | string; message?: unknown; detail?: unknown } | undefined;
  try { body = JSON.parse(text) as typeof body; } catch { /* plain text */ }
  const message = typeof body?.error === 'object' ? body.error.message : body?.error ?? body?.message ?? body?.detail;
  return (typeof message === 'string' ? message : typeof message === 'object' && message !== null ? JSON.stringify(message) : text).trim().slice(0, 500);
}
