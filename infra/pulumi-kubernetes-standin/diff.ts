// Diff as the real provider 4.x computes it: the new inputs against the last live object pruned to the shape
// of the old inputs (so fields the cluster fills in never show, while drift a refresh found does), reported
// per property path; a change under a replace-on-change path (name, namespace, Deployment selector, Service
// clusterIP, ...) replaces the object, deleting it first when the new object must have the same name.
import { isAutonamed, isNamed } from './naming.ts';
import { containsUnknowns, isObject, isUnknown, type Json, type JsonObject } from './wire.ts';

export type DiffKind = 'ADD' | 'ADD_REPLACE' | 'DELETE' | 'DELETE_REPLACE' | 'UPDATE' | 'UPDATE_REPLACE';
export interface PropertyDiff { readonly kind: DiffKind; readonly inputDiff: boolean }
type Segment = string | number;

/** Fields the API server owns; they never count as a change. */
const READ_ONLY_METADATA = ['creationTimestamp', 'deletionGracePeriodSeconds', 'deletionTimestamp', 'generation', 'managedFields', 'resourceVersion', 'uid'];

export function withoutReadOnlyFields(object: JsonObject): JsonObject {
  if (!isObject(object.metadata)) return object;
  const metadata = Object.fromEntries(Object.entries(object.metadata).filter(([k]) => !READ_ONLY_METADATA.includes(k)));
  return { ...object, metadata };
}

/**
 * Inputs in the form the API server stores them, so equal objects compare equal: no server-owned fields, and
 * a v1 Secret's `stringData` folded into `data` (base64), as the API server does (and the real provider).
 */
export function normalizeInputs(object: JsonObject): JsonObject {
  const result = withoutReadOnlyFields(object);
  if (result.apiVersion !== 'v1' || result.kind !== 'Secret' || containsUnknowns(result)) return result;
  const { stringData, ...rest } = result;
  // The API server decodes and re-encodes `data` (dropping whitespace, say); `stringData` overwrites it.
  const data: JsonObject = isObject(rest.data)
    ? Object.fromEntries(Object.entries(rest.data).map(([k, v]) => [k, typeof v === 'string' ? Buffer.from(v, 'base64').toString('base64') : v]))
    : {};
  if (isObject(stringData) && Object.keys(stringData).length > 0) {
    for (const [k, v] of Object.entries(stringData)) data[k] = typeof v === 'string' ? Buffer.from(v).toString('base64') : v;
    return { ...rest, data };
  }
  return isObject(rest.data) ? { ...result, data } : result;
}

/** The live value cut down to the keys (and array elements) `shape` has, recursively. */
export function prune(live: Json, shape: Json): Json {
  if (isObject(live) && isObject(shape)) {
    const result: JsonObject = {};
    for (const [k, v] of Object.entries(live)) if (k in shape) result[k] = prune(v, shape[k]!);
    return result;
  }
  if (Array.isArray(live) && Array.isArray(shape)) {
    const [first] = live;
    const [shapeFirst] = shape;
    if (first !== undefined && shapeFirst !== undefined && kindOf(first) !== kindOf(shapeFirst)) return live;
    return live.slice(0, shape.length).map((v, i) => prune(v, shape[i]!));
  }
  return live;
}

const kindOf = (v: Json) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** `spec.template.metadata.labels["app.kubernetes.io/name"]`, `spec.ports[0].port`: Pulumi's property path syntax. */
export function formatPath(path: readonly Segment[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/[."[\]]/.test(segment)) text += `["${segment.replaceAll('"', '\\"')}"]`;
    else text += text ? `.${segment}` : segment;
  }
  return text;
}

/** Parses a property path (as ignoreChanges gives them); `*` stands for any key or element. */
export function parsePath(text: string): Segment[] {
  const segments: Segment[] = [];
  const pattern = /([^.[\]]+)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+|\*)\]/g;
  for (const match of text.matchAll(pattern)) {
    if (match[1] !== undefined) segments.push(match[1]);
    else if (match[2] !== undefined) segments.push(match[2].replaceAll('\\"', '"'));
    else segments.push(match[3] === '*' ? '*' : Number(match[3]));
  }
  return segments;
}

const segmentMatches = (pattern: Segment, segment: Segment) => pattern === '*' || pattern === segment;
const startsWith = (path: readonly Segment[], prefix: readonly Segment[]) =>
  prefix.length <= path.length && prefix.every((p, i) => segmentMatches(p, path[i]!));

function valueAt(value: Json | undefined, path: readonly Segment[]): Json | undefined {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === 'number') current = current[segment];
    else if (Array.isArray(current) && segment === '*') return current.length ? current[0] : undefined;
    else if (isObject(current) && typeof segment === 'string') current = current[segment];
    else return undefined;
  }
  return current;
}

const MISSING: unique symbol = Symbol('missing');
type Maybe = Json | typeof MISSING;
const at = (v: Maybe, segment: Segment): Maybe => {
  if (Array.isArray(v) && typeof segment === 'number') return segment < v.length ? v[segment]! : MISSING;
  if (isObject(v) && typeof segment === 'string') return segment in v ? v[segment]! : MISSING;
  return MISSING;
};

/**
 * Differences between `old` (the pruned live object) and `next` (the new inputs) by property path. A key only
 * the old side has counts as deleted when the old inputs had it; unknown new values count as changed.
 */
export function detailedDiff(old: JsonObject, next: JsonObject, oldInputs: JsonObject, replacePaths: readonly string[]): Record<string, PropertyDiff> {
  const patterns: Segment[][] = replacePaths.map((p) => p.split('.'));
  const result: Record<string, PropertyDiff> = {};
  const record = (path: Segment[], kind: 'ADD' | 'DELETE' | 'UPDATE', oldValue: Maybe, newValue: Maybe) => {
    const sides: Maybe[] = [oldValue, newValue];
    // A change at or under a listed path replaces; so does a change above one that carries it (a whole new `spec`).
    const replaces = patterns.some((pattern) => startsWith(path, pattern)
      || (startsWith(pattern, path) && sides.some((v) => v !== MISSING && valueAt(v, pattern.slice(path.length)) !== undefined)));
    result[formatPath(path)] = { kind: replaces ? `${kind}_REPLACE` : kind, inputDiff: kind === 'DELETE' };
  };
  const walk = (path: Segment[], o: Maybe, n: Maybe, oi: Maybe): void => {
    if (n === MISSING) {
      if (o !== MISSING && oi !== MISSING) record(path, 'DELETE', o, n);
      return;
    }
    if (isUnknown(n)) return record(path, o === MISSING ? 'ADD' : 'UPDATE', o, n);
    if (o === MISSING) return record(path, 'ADD', o, n);
    if (isObject(o) && isObject(n)) {
      for (const k of new Set([...Object.keys(n), ...Object.keys(o)])) walk([...path, k], at(o, k), at(n, k), at(oi, k));
      return;
    }
    if (Array.isArray(o) && Array.isArray(n)) {
      for (let i = 0; i < Math.max(o.length, n.length); i++) walk([...path, i], at(o, i), at(n, i), at(oi, i));
      return;
    }
    if (JSON.stringify(o) !== JSON.stringify(n)) record(path, 'UPDATE', o, n);
  };
  walk([], old, next, oldInputs);
  return result;
}

export interface DiffInput {
  /** Inputs of the last apply (no secret wrappers). */
  readonly oldInputs: JsonObject;
  /** The live object last recorded (no secret wrappers). */
  readonly oldLive: JsonObject;
  /** Checked new inputs (no secret wrappers; unknowns possible in a preview). */
  readonly newInputs: JsonObject;
  readonly namespaced: boolean;
  readonly replacePaths: readonly string[];
  readonly ignoreChanges: readonly string[];
}

export interface DiffResult {
  readonly changed: boolean;
  readonly replaces: string[];
  readonly deleteBeforeReplace: boolean;
  readonly detailedDiff: Record<string, PropertyDiff>;
}

const metadataOf = (o: JsonObject): JsonObject => (isObject(o.metadata) ? o.metadata : {});
const canonicalNamespace = (o: JsonObject, namespaced: boolean): JsonObject => {
  const metadata = { ...metadataOf(o) };
  if (namespaced) metadata.namespace = typeof metadata.namespace === 'string' && metadata.namespace ? metadata.namespace : (metadata.namespace ?? 'default');
  else delete metadata.namespace;
  return { ...o, metadata };
};

export function diffObject(input: DiffInput): DiffResult {
  const oldInputs = normalizeInputs(input.oldInputs);
  const pruned = canonicalNamespace(withoutReadOnlyFields(prune(input.oldLive, oldInputs) as JsonObject), input.namespaced);
  const next = canonicalNamespace(normalizeInputs(input.newInputs), input.namespaced);
  const detailed = detailedDiff(pruned, next, oldInputs, input.replacePaths);
  const ignored = input.ignoreChanges.map(parsePath);
  for (const path of Object.keys(detailed)) if (ignored.some((ignore) => startsWith(parsePath(path), ignore))) delete detailed[path];

  const replaces = Object.entries(detailed).filter(([path, d]) => d.kind.endsWith('_REPLACE') || (path === 'metadata' && d.kind === 'DELETE')).map(([path]) => path);
  const newMetadata = metadataOf(next);
  const oldMetadata = metadataOf(input.oldLive);
  const deleteBeforeReplace = replaces.length > 0 && isNamed(input.newInputs) && !isAutonamed(input.newInputs)
    && newMetadata.name === oldMetadata.name && (newMetadata.namespace ?? undefined) === (input.namespaced ? (oldMetadata.namespace ?? 'default') : undefined);
  return { changed: Object.keys(detailed).length > 0, replaces, deleteBeforeReplace, detailedDiff: detailed };
}
