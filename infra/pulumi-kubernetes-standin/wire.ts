// Property values as the Pulumi engine sends them, kept as plain JSON: a secret is an object carrying the
// secret signature, an unknown (a preview's not-yet-computed value) is a sentinel string. Handlers work on
// `reveal`ed copies and put secretness back with `annotateSecrets`, as the real provider does.
import structPb from 'google-protobuf/google/protobuf/struct_pb.js';
import type { Struct } from 'google-protobuf/google/protobuf/struct_pb.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Key and value marking a special object (secret, asset, ...) in Pulumi's wire format. */
const SIG_KEY = '4dabf18193072939515e22adb298388d';
const SECRET_SIG = '1b47061264138c4ac30d75fd1eb44270';
export const UNKNOWN = '04da6b54-80e4-46f7-96ec-b56ff0331ba9';

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isSecret = (v: unknown): v is { value: Json } => isObject(v) && v[SIG_KEY] === SECRET_SIG;
export const isUnknown = (v: unknown): boolean => v === UNKNOWN;
export const secret = (value: Json): Json => (isSecret(value) ? value : { [SIG_KEY]: SECRET_SIG, value });

/** The value with every secret wrapper removed (unknowns stay). */
export function reveal(v: Json | undefined): Json {
  if (v === undefined) return null;
  if (isSecret(v)) return reveal(v.value);
  if (Array.isArray(v)) return v.map(reveal);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, reveal(x)]));
  return v;
}

export function revealObject(v: Json | undefined): JsonObject {
  const plain = reveal(v);
  return isObject(plain) ? plain : {};
}

export function containsSecrets(v: Json | undefined): boolean {
  if (isSecret(v)) return true;
  if (Array.isArray(v)) return v.some(containsSecrets);
  if (isObject(v)) return Object.values(v).some(containsSecrets);
  return false;
}

export function containsUnknowns(v: Json | undefined): boolean {
  if (isUnknown(v)) return true;
  if (isSecret(v)) return containsUnknowns(v.value);
  if (Array.isArray(v)) return v.some(containsUnknowns);
  if (isObject(v)) return Object.values(v).some(containsUnknowns);
  return false;
}

/**
 * Marks values of `outs` secret where the matching value of `ins` holds a secret: objects are followed key by
 * key (one secret label does not hide a whole Deployment), anything else is marked whole. A v1 Secret's
 * `data` and `stringData` are always secret.
 */
export function annotateSecrets(outs: JsonObject, ins: Json | undefined): JsonObject {
  const result: JsonObject = { ...outs };
  if (result.kind === 'Secret') {
    for (const key of ['data', 'stringData']) if (key in result) result[key] = secret(result[key]!);
    return result;
  }
  const source = isSecret(ins) ? ins.value : ins;
  if (!isObject(source)) return result;
  for (const [key, inValue] of Object.entries(source)) {
    const out = result[key];
    if (out === undefined) continue;
    if (isObject(out) && !isSecret(out) && isObject(inValue) && !isSecret(inValue)) result[key] = annotateSecrets(out, inValue);
    else if (!isSecret(out) && containsSecrets(inValue)) result[key] = secret(out);
  }
  return result;
}

export function fromStruct(struct: Struct | undefined): JsonObject {
  return (struct?.toJavaScript() ?? {}) as JsonObject;
}

export function toStruct(value: JsonObject): Struct {
  return structPb.Struct.fromJavaScript(value as Parameters<typeof structPb.Struct.fromJavaScript>[0]);
}

/** A deep copy, so handlers can change objects they were given. */
export const clone = <T extends Json>(v: T): T => structuredClone(v);
