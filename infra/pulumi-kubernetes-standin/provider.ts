// The resource provider's operations on plain values (grpc-server.ts does the protobuf): Configure, Check,
// Diff, Create, Read, Update, Delete and Cancel for the Kubernetes kinds, following the real provider 4.x in
// server-side apply mode. Previews never call the cluster: they answer with the planned object.
import type { KubeApi } from '../../lib/kubernetes/api.ts';
import { AwaitTimeout, Cluster, describe, isAlreadyExists, type ObjectRef } from './cluster.ts';
import { diffObject, normalizeInputs, parsePath, prune, withoutReadOnlyFields, type DiffResult } from './diff.ts';
import { deletionSkipsAwait, gvkOfType, Kinds, nameOfUrn, replaceOnChangePaths, typeOfUrn, UnknownKindError, type Gvk } from './kinds.ts';
import { assignName, assignNamespace, uniqueName, type Autonaming } from './naming.ts';
import { diffConfig, readProviderConfig, type ConfigDiff, type ProviderConfig } from './provider-config.ts';
import { checkpoint, idOf, parseId, parseState, toKubernetes } from './state.ts';
import { annotateSecrets, clone, isObject, revealObject, type Json, type JsonObject } from './wire.ts';

const ANNOTATION = {
  skipAwait: 'pulumi.com/skipAwait',
  timeoutSeconds: 'pulumi.com/timeoutSeconds',
  fieldManager: 'pulumi.com/patchFieldManager',
  deletionPropagation: 'pulumi.com/deletionPropagationPolicy',
} as const;
const DEFAULT_TIMEOUT_SECONDS = 600;

/** Created or changed, but not ready in time: the engine records `properties` (the object exists) and reports the failure. */
export class PartialFailure extends Error {
  readonly id: string;
  readonly properties: JsonObject;
  constructor(message: string, id: string, properties: JsonObject) {
    super(message);
    this.id = id;
    this.properties = properties;
  }
}

export interface CheckRequest {
  readonly urn: string;
  readonly olds: JsonObject;
  readonly news: JsonObject;
  readonly randomSeed: Uint8Array | undefined;
  readonly autonaming: Autonaming | undefined;
}
export interface DiffRequest { readonly urn: string; readonly olds: JsonObject; readonly news: JsonObject; readonly ignoreChanges: readonly string[] }
export interface CreateRequest { readonly urn: string; readonly properties: JsonObject; readonly timeout: number; readonly preview: boolean }
export interface ReadRequest { readonly urn: string; readonly id: string; readonly properties: JsonObject; readonly inputs: JsonObject }
export interface UpdateRequest {
  readonly urn: string;
  readonly id: string;
  readonly olds: JsonObject;
  readonly news: JsonObject;
  readonly timeout: number;
  readonly ignoreChanges: readonly string[];
  readonly preview: boolean;
}
export interface DeleteRequest { readonly urn: string; readonly id: string; readonly properties: JsonObject; readonly timeout: number }

const metadataOf = (o: JsonObject): JsonObject => (isObject(o.metadata) ? o.metadata : {});
const annotation = (o: JsonObject, name: string): string | undefined => {
  const annotations = metadataOf(o).annotations;
  const value = isObject(annotations) ? annotations[name] : undefined;
  return typeof value === 'string' ? value : undefined;
};
const stringField = (v: Json | undefined) => (typeof v === 'string' && v ? v : undefined);

function gvkOf(object: JsonObject, urn: string): Gvk {
  const apiVersion = stringField(object.apiVersion);
  const kind = stringField(object.kind);
  return apiVersion && kind ? { apiVersion, kind } : gvkOfType(typeOfUrn(urn));
}

/** Seconds the engine gave (customTimeouts), else the object's `pulumi.com/timeoutSeconds`, else ten minutes. */
function deadline(timeoutSeconds: number, inputs: JsonObject): number {
  const annotated = Number(annotation(inputs, ANNOTATION.timeoutSeconds));
  const seconds = timeoutSeconds > 0 ? timeoutSeconds : Number.isFinite(annotated) && annotated > 0 ? annotated : DEFAULT_TIMEOUT_SECONDS;
  return Date.now() + seconds * 1000;
}

/** The new inputs laid over the last live object: the preview of an update, without asking the cluster. */
function overlay(base: Json | undefined, top: Json): Json {
  if (isObject(base) && isObject(top)) {
    const result: JsonObject = { ...base };
    for (const [k, v] of Object.entries(top)) result[k] = overlay(base[k], v);
    return result;
  }
  return top;
}

function setAt(target: JsonObject, path: (string | number)[], value: Json): void {
  let current: Json = target;
  for (const [i, segment] of path.entries()) {
    const last = i === path.length - 1;
    if (isObject(current) && typeof segment === 'string') {
      if (last) current[segment] = value;
      else current = current[segment] ??= typeof path[i + 1] === 'number' ? [] : {};
    } else if (Array.isArray(current) && typeof segment === 'number' && segment < current.length) {
      if (last) current[segment] = value;
      else current = current[segment]!;
    } else return;
  }
}

function getAt(source: Json, path: (string | number)[]): Json | undefined {
  let current: Json | undefined = source;
  for (const segment of path) {
    if (isObject(current) && typeof segment === 'string') current = current[segment];
    else if (Array.isArray(current) && typeof segment === 'number') current = current[segment];
    else return undefined;
  }
  return current;
}

export class KubernetesProvider {
  private config: ProviderConfig = {
    api: undefined, unreachableReason: 'the provider was not configured', defaultNamespace: 'default', upsertExistingObjects: false, secretMutable: false, configMapMutable: false,
  };
  private configured = false;
  private cancel = new AbortController();
  private readonly kinds = new Kinds(() => this.config.api);

  configure(variables: Map<string, string>): void {
    this.config = readProviderConfig(variables);
    this.configured = true;
  }

  diffConfig(olds: JsonObject, news: JsonObject): ConfigDiff {
    return diffConfig(olds, news);
  }

  /** Stops waits in progress; the operations they belong to fail. */
  cancelAll(): void {
    this.cancel.abort(new Error('the operation was cancelled'));
    this.cancel = new AbortController();
  }

  private cluster(): Cluster {
    return new Cluster(this.api());
  }

  private api(): KubeApi {
    if (!this.configured) throw new Error('the provider was not configured');
    if (!this.config.api) throw new Error(`configured Kubernetes cluster is unreachable: ${this.config.unreachableReason}`);
    return this.config.api;
  }

  async check({ urn, olds, news, randomSeed, autonaming }: CheckRequest): Promise<{ inputs: JsonObject; failures: { property: string; reason: string }[] }> {
    const type = typeOfUrn(urn);
    if (type.endsWith('List')) {
      throw new Error('list resources exist for compatibility with YAML manifests and Helm charts, and cannot be created directly. Use the underlying resource type instead');
    }
    const inputs = clone(news);
    const failures = ['apiVersion', 'kind'].filter((k) => !stringField(inputs[k])).map((k) => ({ property: k, reason: `${k} is required` }));
    assignName(inputs, { resourceName: nameOfUrn(urn), randomSeed, autonaming, oldInputs: revealObject(olds) });
    if (await this.kinds.isNamespaced(gvkOf(revealObject(inputs), urn))) assignNamespace(inputs, this.config.defaultNamespace);
    // A Secret's data is secret in the inputs the engine records too, even when the program did not say so.
    return { inputs: annotateSecrets(inputs, news), failures };
  }

  async diff({ urn, olds, news, ignoreChanges }: DiffRequest): Promise<DiffResult> {
    const state = parseState(olds);
    const newInputs = toKubernetes(news);
    const gvk = gvkOf(newInputs, urn);
    return diffObject({
      oldInputs: state.inputs,
      oldLive: state.live,
      newInputs,
      namespaced: await this.kinds.isNamespaced(gvk),
      replacePaths: replaceOnChangePaths(gvk, newInputs.immutable === true, this.config),
      ignoreChanges,
    });
  }

  async create({ urn, properties, timeout, preview }: CreateRequest): Promise<{ id: string; properties: JsonObject }> {
    const object = toKubernetes(properties);
    const fieldManager = annotation(object, ANNOTATION.fieldManager) ?? uniqueName('pulumi-kubernetes-', undefined);
    const initialApiVersion = stringField(object.apiVersion) ?? gvkOf(object, urn).apiVersion;
    const state = (live: JsonObject) => checkpoint({ live, inputs: properties, fieldManager, initialApiVersion });
    if (preview) return { id: '', properties: state(object) };

    const ref = await this.refOf(object, urn);
    const cluster = this.cluster();
    const post = async () => {
      try {
        return await cluster.create(ref, object, this.cancel.signal);
      } catch (error) {
        // The object it replaces may still be going (deleted first, without waiting: skipAwait); wait for it, then
        // create. It may also have gone between the refused POST and this read: then create straight away.
        if (!isAlreadyExists(error)) throw error;
        const existing = await cluster.get(ref);
        if (existing && !(isObject(existing.metadata) && existing.metadata.deletionTimestamp)) throw error;
        if (existing) await cluster.waitUntilGone(ref, deadline(timeout, object), this.cancel.signal);
        return cluster.create(ref, object, this.cancel.signal);
      }
    };
    let live: JsonObject;
    try {
      live = this.config.upsertExistingObjects ? await cluster.apply(ref, object, fieldManager) : await post();
    } catch (error) {
      if (isAlreadyExists(error)) {
        throw new Error(`resource "${urn}" was not successfully created by the Kubernetes API server: ${describe(ref)} already exists. `
          + 'Set upsertExistingObjects on the provider to adopt it, or import it.', { cause: error });
      }
      throw new Error(`resource "${urn}" was not successfully created by the Kubernetes API server: ${(error as Error).message}`, { cause: error });
    }
    live = await this.awaitReady(ref, object, live, timeout, (last, message) => new PartialFailure(
      `resource "${urn}" was successfully created, but the Kubernetes API server reported that it failed to fully initialize or become live: ${message}`,
      idOf(last), state(last)));
    return { id: idOf(live), properties: state(live) };
  }

  async read({ urn, id, properties, inputs }: ReadRequest): Promise<{ id: string; properties?: JsonObject; inputs?: JsonObject }> {
    const state = parseState(properties);
    const given = toKubernetes(inputs);
    const oldInputs = Object.keys(given).length > 0 ? given : state.inputs;
    // Without old inputs or state (an import, or `get`), the object is read as the cluster has it.
    const fromCluster = !stringField(oldInputs.kind) && !stringField(state.live.kind);
    const gvk = stringField(oldInputs.kind) ? gvkOf(oldInputs, urn) : gvkOf(state.live, urn);
    const { namespace, name } = parseId(id);
    if (!name) throw new Error(`failed to read resource because of a failure to parse resource name from request ID: ${id}`);
    let ref: ObjectRef;
    try {
      ref = { gvk, info: await this.kinds.info(gvk), namespace, name };
    } catch (error) {
      // The kind itself is gone (a custom resource whose definition was deleted): so is the object.
      if (error instanceof UnknownKindError && this.config.api) return { id: '' };
      throw error;
    }
    const live = await this.cluster().get(ref);
    if (!live) return { id: '' };

    const liveInputs = fromCluster ? inputsFromLive(live) : withoutReadOnlyFields(prune(live, normalizeInputs(oldInputs)) as JsonObject);
    const secretInputs = Object.keys(inputs).length > 0 ? inputs : properties.__inputs;
    const recordedInputs = annotateSecrets(liveInputs, secretInputs);
    const fieldManager = state.fieldManager ?? annotation(oldInputs, ANNOTATION.fieldManager) ?? uniqueName('pulumi-kubernetes-', undefined);
    const initialApiVersion = state.initialApiVersion ?? stringField(oldInputs.apiVersion) ?? gvk.apiVersion;
    return { id, properties: checkpoint({ live, inputs: recordedInputs, fieldManager, initialApiVersion }), inputs: recordedInputs };
  }

  async update({ urn, olds, news, timeout, ignoreChanges, preview }: UpdateRequest): Promise<{ properties: JsonObject }> {
    const previous = parseState(olds);
    const object = toKubernetes(news);
    const fieldManager = annotation(object, ANNOTATION.fieldManager) ?? previous.fieldManager ?? uniqueName('pulumi-kubernetes-', undefined);
    const initialApiVersion = previous.initialApiVersion ?? stringField(previous.inputs.apiVersion) ?? gvkOf(object, urn).apiVersion;
    const state = (live: JsonObject) => checkpoint({ live, inputs: news, fieldManager, initialApiVersion });
    if (preview) return { properties: state(overlay(withoutReadOnlyFields(previous.live), object) as JsonObject) };

    // An update keeps the object's identity (a new name or namespace is a replacement), so the old live object names it.
    const ref = await this.refOf(Object.keys(previous.live).length > 0 ? previous.live : object, urn);
    const cluster = this.cluster();
    const current = await cluster.get(ref);
    if (!current) throw new Error(`update of resource "${urn}" failed: ${describe(ref)} does not exist any more (run pulumi refresh)`);
    const owned = await cluster.takeOverFields(ref, current, fieldManager);
    // Ignored changes keep the value the cluster has, so applying does not reset them.
    const applied = clone(object);
    for (const path of ignoreChanges.map(parsePath)) {
      const concrete = path.filter((s): s is string | number => s !== '*');
      if (concrete.length !== path.length) continue;
      const value = getAt(owned, concrete);
      if (value !== undefined) setAt(applied, concrete, value);
    }
    let live: JsonObject;
    try {
      live = await cluster.apply(ref, applied, fieldManager);
    } catch (error) {
      throw new Error(`update of resource "${urn}" failed: ${(error as Error).message}`, { cause: error });
    }
    live = await this.awaitReady(ref, object, live, timeout, (last, message) => new PartialFailure(
      `the Kubernetes API server reported that "${idOf(last)}" failed to fully initialize or become live: ${message}`, idOf(last), state(last)));
    return { properties: state(live) };
  }

  async delete({ urn, id, properties, timeout }: DeleteRequest): Promise<void> {
    const state = parseState(properties);
    const gvk = stringField(state.live.kind) ? gvkOf(state.live, urn) : gvkOf(state.inputs, urn);
    const { namespace, name } = parseId(id);
    let ref: ObjectRef;
    try {
      ref = { gvk, info: await this.kinds.info(gvk), namespace, name };
    } catch (error) {
      if (error instanceof UnknownKindError && this.config.api) return;
      throw error;
    }
    const policy = { orphan: 'Orphan', background: 'Background' }[annotation(state.inputs, ANNOTATION.deletionPropagation)?.toLowerCase() ?? ''] as 'Orphan' | 'Background' | undefined;
    const cluster = this.cluster();
    if (!(await cluster.delete(ref, policy ?? 'Foreground'))) return;
    if (annotation(state.inputs, ANNOTATION.skipAwait) === 'true' && deletionSkipsAwait(gvk)) return;
    await cluster.waitUntilGone(ref, deadline(timeout, state.inputs), this.cancel.signal);
  }

  private async refOf(object: JsonObject, urn: string): Promise<ObjectRef> {
    const gvk = gvkOf(object, urn);
    const info = await this.kinds.info(gvk);
    const metadata = metadataOf(object);
    const name = stringField(metadata.name);
    if (!name) throw new Error(`${gvk.kind} of resource "${urn}" has no metadata.name`);
    return { gvk, info, namespace: info.namespaced ? (stringField(metadata.namespace) ?? this.config.defaultNamespace) : undefined, name };
  }

  /**
   * Without `pulumi.com/skipAwait: "true"`, a Deployment is waited for until available (the real provider
   * also awaits other kinds; the stand-in does not, see README). `failure` builds the error for a timeout.
   */
  private async awaitReady(ref: ObjectRef, inputs: JsonObject, live: JsonObject, timeout: number, failure: (last: JsonObject, message: string) => Error): Promise<JsonObject> {
    if (annotation(inputs, ANNOTATION.skipAwait) === 'true') return live;
    if (!(ref.gvk.apiVersion === 'apps/v1' && ref.gvk.kind === 'Deployment')) return live;
    try {
      return await this.cluster().waitUntilDeploymentAvailable(ref, deadline(timeout, inputs), this.cancel.signal);
    } catch (error) {
      if (error instanceof AwaitTimeout) throw failure(error.live, error.message);
      throw failure(live, (error as Error).message);
    }
  }
}

/** Inputs of an object read without any (import): its fields as the cluster has them, less what the server owns. */
function inputsFromLive(live: JsonObject): JsonObject {
  const { status: _status, ...rest } = withoutReadOnlyFields(live);
  const metadata = { ...metadataOf(rest) };
  if (isObject(metadata.annotations)) {
    const annotations = { ...metadata.annotations };
    delete annotations['deployment.kubernetes.io/revision'];
    delete annotations['kubectl.kubernetes.io/last-applied-configuration'];
    metadata.annotations = annotations;
  }
  return { ...rest, metadata };
}

