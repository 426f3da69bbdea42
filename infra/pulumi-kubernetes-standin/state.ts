// The resource state in the real provider's shape, so a stack can move to the real plugin without diffs: the
// live object's fields at the top level, plus `__inputs` (the inputs it was applied from), `__fieldManager`
// (its server-side apply manager) and `__initialApiVersion`. The id is `namespace/name`, or `name` for
// cluster-scoped objects.
import { annotateSecrets, isObject, reveal, revealObject, type Json, type JsonObject } from './wire.ts';

const INPUTS = '__inputs';
const FIELD_MANAGER = '__fieldManager';
const INITIAL_API_VERSION = '__initialApiVersion';

/** CRD schema keys the SDKs spell with underscores and the API server with dashes. */
const DASHED_KEYS = [
  'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string', 'x-kubernetes-list-map-keys', 'x-kubernetes-list-type',
  'x-kubernetes-map-type', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-validations',
];
const TO_DASHED = new Map(DASHED_KEYS.map((k) => [k.replaceAll('-', '_'), k]));
const TO_UNDERSCORED = new Map(DASHED_KEYS.map((k) => [k, k.replaceAll('-', '_')]));

function renameKeys(v: Json, names: Map<string, string>): Json {
  if (Array.isArray(v)) return v.map((x) => renameKeys(x, names));
  if (!isObject(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [names.get(k) ?? k, renameKeys(x, names)]));
}

/** An object as the API server wants it: no secret wrappers, CRD keys dashed. */
export function toKubernetes(inputs: Json): JsonObject {
  return renameKeys(revealObject(inputs), TO_DASHED) as JsonObject;
}

export interface Checkpoint {
  /** The object as Pulumi state holds it (CRD keys underscored). */
  readonly live: JsonObject;
  /** Inputs exactly as given, secrets included. */
  readonly inputs: JsonObject;
  readonly fieldManager: string;
  readonly initialApiVersion: string;
}

/** Outputs of Create, Read and Update: the live object marked secret where the inputs were, plus the bookkeeping keys. */
export function checkpoint({ live, inputs, fieldManager, initialApiVersion }: Checkpoint): JsonObject {
  const object = annotateSecrets(renameKeys(live, TO_UNDERSCORED) as JsonObject, inputs);
  return { ...object, [INPUTS]: annotateSecrets(inputs, inputs), [INITIAL_API_VERSION]: initialApiVersion, [FIELD_MANAGER]: fieldManager };
}

export interface ParsedState {
  /** The old inputs, without secret wrappers, CRD keys dashed. */
  readonly inputs: JsonObject;
  /** The live object last recorded, without secret wrappers, CRD keys dashed. */
  readonly live: JsonObject;
  readonly fieldManager: string | undefined;
  readonly initialApiVersion: string | undefined;
}

export function parseState(state: JsonObject): ParsedState {
  const { [INPUTS]: inputs, [FIELD_MANAGER]: fieldManager, [INITIAL_API_VERSION]: initialApiVersion, ...live } = state;
  const plainFieldManager = reveal(fieldManager);
  const plainVersion = reveal(initialApiVersion);
  return {
    inputs: toKubernetes(inputs ?? {}),
    live: toKubernetes(live),
    fieldManager: typeof plainFieldManager === 'string' ? plainFieldManager : undefined,
    initialApiVersion: typeof plainVersion === 'string' ? plainVersion : undefined,
  };
}

/** `namespace/name`, or `name` when the object has no namespace. */
export function idOf(object: JsonObject): string {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  return typeof metadata.namespace === 'string' && metadata.namespace ? `${metadata.namespace}/${name}` : name;
}

export function parseId(id: string): { namespace: string | undefined; name: string } {
  const slash = id.indexOf('/');
  return slash < 0 ? { namespace: undefined, name: id } : { namespace: id.slice(0, slash), name: id.slice(slash + 1) };
}
