// Check's work on an object's identity, as the real provider does it: an object without `metadata.name` gets
// `<resource name>-<8 hex>` and the `pulumi.com/autonamed` annotation, keeps that name on later runs (read
// from the old inputs), and a namespaced object without a namespace gets the provider's default one.
import { createHash, randomBytes } from 'node:crypto';
import { isObject, isSecret, isUnknown, type JsonObject } from './wire.ts';

export const AUTONAMED = 'pulumi.com/autonamed';

/** How the engine asks names to be made (`pulumi:autonaming` config), when it says. */
export interface Autonaming {
  readonly mode: 'propose' | 'enforce' | 'disable';
  readonly proposedName: string;
}

/** The metadata object to edit in place, or undefined when it is unknown or secret as a whole. */
function metadataOf(inputs: JsonObject): JsonObject | undefined {
  if (inputs.metadata === undefined || inputs.metadata === null) inputs.metadata = {};
  return isObject(inputs.metadata) && !isSecret(inputs.metadata) ? inputs.metadata : undefined;
}

/** Named means a name is set, or will be: an unknown name counts (metadata unknown as a whole too). */
export function isNamed(inputs: JsonObject): boolean {
  const metadata = inputs.metadata;
  if (!isObject(metadata) || isSecret(metadata)) return metadata !== undefined && metadata !== null;
  return (typeof metadata.name === 'string' && metadata.name !== '') || isUnknown(metadata.name) || isSecret(metadata.name);
}

function hasGenerateName(inputs: JsonObject): boolean {
  const metadata = inputs.metadata;
  return isObject(metadata) && (isUnknown(metadata.generateName) || (typeof metadata.generateName === 'string' && metadata.generateName !== ''));
}

export function isAutonamed(inputs: JsonObject): boolean {
  const metadata = inputs.metadata;
  return isObject(metadata) && isObject(metadata.annotations) && metadata.annotations[AUTONAMED] === 'true';
}

function setAutonamed(metadata: JsonObject): void {
  if (metadata.annotations === undefined || metadata.annotations === null) metadata.annotations = {};
  // An unknown or secret annotations map cannot take a key; the real provider leaves it alone too.
  if (isObject(metadata.annotations) && !isSecret(metadata.annotations)) metadata.annotations[AUTONAMED] = 'true';
}

/**
 * `<prefix><8 hex>`: derived from the engine's random seed when it sends one (so the same seed makes the
 * same name), else random.
 */
export function uniqueName(prefix: string, seed: Uint8Array | undefined): string {
  const bytes = seed && seed.length > 0 ? createHash('sha256').update(seed).update(prefix).digest() : randomBytes(4);
  return `${prefix}${bytes.subarray(0, 4).toString('hex')}`;
}

export interface NamingRequest {
  /** The resource's name in the program (the URN's last part). */
  readonly resourceName: string;
  readonly randomSeed: Uint8Array | undefined;
  readonly autonaming: Autonaming | undefined;
  /** Inputs of the previous run (empty for a new resource). */
  readonly oldInputs: JsonObject;
}

/** Gives `inputs` (edited in place) a name when it has none. */
export function assignName(inputs: JsonObject, request: NamingRequest): void {
  if (isNamed(inputs) || hasGenerateName(inputs)) return;
  const metadata = metadataOf(inputs);
  if (!metadata) return;
  if (Object.keys(request.oldInputs).length > 0) {
    // An existing resource keeps the name it was given, so an update does not become a replacement.
    const oldName = isObject(request.oldInputs.metadata) ? request.oldInputs.metadata.name : undefined;
    if (isAutonamed(request.oldInputs) && typeof oldName === 'string' && oldName) {
      metadata.name = oldName;
      setAutonamed(metadata);
    }
    return;
  }
  const { autonaming } = request;
  if (autonaming?.mode === 'disable') throw new Error('autonaming is disabled, resource requires the .metadata.name field to be set');
  metadata.name = autonaming?.proposedName || uniqueName(`${request.resourceName}-`, request.randomSeed);
  setAutonamed(metadata);
}

/** Gives a namespaced object without a namespace the default one (edited in place). */
export function assignNamespace(inputs: JsonObject, namespace: string): void {
  const metadata = metadataOf(inputs);
  if (!metadata) return;
  if (metadata.namespace === undefined || metadata.namespace === null || metadata.namespace === '') metadata.namespace = namespace;
}
