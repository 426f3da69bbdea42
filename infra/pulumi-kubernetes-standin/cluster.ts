// The stand-in's calls to the Kubernetes API, through Kiln's own client: create, server-side apply, read,
// delete, and the waits (until an object is gone, until a Deployment is available). Waits poll the object
// and give up at a deadline or when the engine cancels.
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeApiError, type KubeApi } from '../../lib/kubernetes/api.ts';
import { collectionPath, objectPath, type Gvk, type KindInfo } from './kinds.ts';
import { isObject, type Json, type JsonObject } from './wire.ts';

/** Field manager of objects the provider creates with POST, as the real provider names it. */
export const CREATE_FIELD_MANAGER = 'pulumi-kubernetes';
const POLL_MS = 500;

export interface ObjectRef {
  readonly gvk: Gvk;
  readonly info: KindInfo;
  readonly namespace: string | undefined;
  readonly name: string;
}

export const isNotFound = (e: unknown) => e instanceof KubeApiError && e.status === 404;
export const isAlreadyExists = (e: unknown) => e instanceof KubeApiError && e.status === 409 && isObject(e.body) && e.body.reason === 'AlreadyExists';

const query = (params: Record<string, string | undefined>) => {
  const entries = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined);
  return entries.length ? `?${new URLSearchParams(entries).toString()}` : '';
};

export class Cluster {
  private readonly api: KubeApi;
  constructor(api: KubeApi) {
    this.api = api;
  }

  /** POST; a namespace that does not exist yet (created in the same update) is waited for a little, as the real provider does. */
  async create(ref: ObjectRef, object: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    const path = collectionPath(ref.gvk, ref.info, ref.namespace) + query({ fieldManager: CREATE_FIELD_MANAGER });
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.api.request<JsonObject>('POST', path, object);
      } catch (error) {
        if (!isNotFound(error) || attempt >= 5) throw error;
        await sleep(500 * 2 ** attempt, undefined, { signal });
      }
    }
  }

  /** Server-side apply with the given field manager, taking over conflicting fields (force). */
  apply(ref: ObjectRef, object: JsonObject, fieldManager: string): Promise<JsonObject> {
    const path = objectPath(ref.gvk, ref.info, ref.namespace, ref.name) + query({ fieldManager, force: 'true' });
    // JSON is YAML, so the object goes as it is.
    return this.api.request<JsonObject>('PATCH', path, object, 'application/apply-patch+yaml');
  }

  /** The object, or undefined when it does not exist. */
  async get(ref: ObjectRef): Promise<JsonObject | undefined> {
    try {
      return await this.api.get<JsonObject>(objectPath(ref.gvk, ref.info, ref.namespace, ref.name));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /**
   * Gives `fieldManager`'s apply entry the fields written by the provider's POST (and by kubectl), as the
   * real provider does before its first server-side apply: only then does removing a field from the inputs
   * remove it from the object. Answers the object as it is after.
   */
  async takeOverFields(ref: ObjectRef, live: JsonObject, fieldManager: string): Promise<JsonObject> {
    const metadata = isObject(live.metadata) ? live.metadata : {};
    const entries = Array.isArray(metadata.managedFields) ? metadata.managedFields.filter(isObject) : [];
    const takenOver = (e: JsonObject) => !e.subresource && FORMER_MANAGERS.some(([manager, operation]) =>
      (e.manager === manager || (manager === '' && e.manager === fieldManager)) && e.operation === operation);
    const moving = entries.filter(takenOver);
    if (moving.length === 0) return live;
    const ours = entries.find((e) => e.manager === fieldManager && e.operation === 'Apply' && !e.subresource);
    const fields = [ours, ...moving].reduce<JsonObject>((all, e) => mergeFields(all, isObject(e?.fieldsV1) ? e.fieldsV1 : {}), {});
    const merged: JsonObject = {
      manager: fieldManager, operation: 'Apply', apiVersion: ref.gvk.apiVersion, time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      fieldsType: 'FieldsV1', fieldsV1: fields,
    };
    const managedFields = [...entries.filter((e) => e !== ours && !takenOver(e)), merged];
    const patch = [
      { op: 'test', path: '/metadata/resourceVersion', value: metadata.resourceVersion ?? null },
      { op: 'replace', path: '/metadata/managedFields', value: managedFields },
    ];
    return this.api.request<JsonObject>('PATCH', objectPath(ref.gvk, ref.info, ref.namespace, ref.name), patch, 'application/json-patch+json');
  }

  /** Deletes with the propagation policy given; false when there was nothing to delete. */
  async delete(ref: ObjectRef, propagationPolicy: 'Foreground' | 'Background' | 'Orphan'): Promise<boolean> {
    try {
      await this.api.request('DELETE', objectPath(ref.gvk, ref.info, ref.namespace, ref.name), { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /** Polls until the object is gone; throws with its last state at the deadline. */
  async waitUntilGone(ref: ObjectRef, deadline: number, signal: AbortSignal): Promise<void> {
    for (;;) {
      const live = await this.get(ref);
      if (!live) return;
      if (Date.now() >= deadline) throw new AwaitTimeout(`${describe(ref)} was not deleted in time; it is still there${finalizers(live)}`, live);
      await sleep(POLL_MS, undefined, { signal });
    }
  }

  /**
   * Polls a Deployment until its controller has seen the latest spec and every desired replica is updated
   * and available (what `kubectl rollout status` waits for).
   */
  async waitUntilDeploymentAvailable(ref: ObjectRef, deadline: number, signal: AbortSignal): Promise<JsonObject> {
    for (;;) {
      const live = await this.get(ref);
      if (!live) throw new Error(`${describe(ref)} disappeared while waiting for it to become available`);
      const state = deploymentRollout(live);
      if (state === 'available') return live;
      if (state === 'stalled') throw new AwaitTimeout(`${describe(ref)} exceeded its progress deadline`, live);
      if (Date.now() >= deadline) throw new AwaitTimeout(`${describe(ref)} did not become available in time (${rolloutSummary(live)})`, live);
      await sleep(POLL_MS, undefined, { signal });
    }
  }
}

/** An object was created or changed but did not reach the awaited state; `live` is what was last seen. */
export class AwaitTimeout extends Error {
  readonly live: JsonObject;
  constructor(message: string, live: JsonObject) {
    super(message);
    this.live = live;
  }
}

/** (manager, operation) pairs whose fields the provider's apply manager takes over; '' is the apply manager's own Update entry. */
const FORMER_MANAGERS: readonly [string, string][] = [
  ['kubectl', 'Apply'], ['kubectl', 'Update'], ['before-first-apply', 'Update'],
  [CREATE_FIELD_MANAGER, 'Update'], ['pulumi-kubernetes.exe', 'Update'], ['pulumi-resource-kubernetes', 'Update'], ['', 'Update'],
];

/** Union of two FieldsV1 sets (nested objects whose leaves are `{}`). */
function mergeFields(a: JsonObject, b: JsonObject): JsonObject {
  const result: JsonObject = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const existing = result[k];
    result[k] = isObject(existing) && isObject(v) ? mergeFields(existing, v) : v;
  }
  return result;
}

const num = (v: Json | undefined) => (typeof v === 'number' ? v : 0);

function deploymentRollout(live: JsonObject): 'available' | 'progressing' | 'stalled' {
  const spec = isObject(live.spec) ? live.spec : {};
  const status = isObject(live.status) ? live.status : {};
  const metadata = isObject(live.metadata) ? live.metadata : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isObject) : [];
  if (conditions.some((c) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded')) return 'stalled';
  const desired = typeof spec.replicas === 'number' ? spec.replicas : 1;
  const seen = num(status.observedGeneration) >= num(metadata.generation);
  const done = num(status.updatedReplicas) >= desired && num(status.replicas) === desired && num(status.availableReplicas) >= desired;
  return seen && done ? 'available' : 'progressing';
}

function rolloutSummary(live: JsonObject): string {
  const status = isObject(live.status) ? live.status : {};
  const spec = isObject(live.spec) ? live.spec : {};
  return `${num(status.availableReplicas)} of ${typeof spec.replicas === 'number' ? spec.replicas : 1} replicas available, ${num(status.updatedReplicas)} updated`;
}

function finalizers(live: JsonObject): string {
  const list = isObject(live.metadata) && Array.isArray(live.metadata.finalizers) ? live.metadata.finalizers : [];
  return list.length ? ` (finalizers: ${list.join(', ')})` : '';
}

export const describe = (ref: ObjectRef) => `${ref.gvk.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
