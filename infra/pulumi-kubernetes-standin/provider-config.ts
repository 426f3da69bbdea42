// The provider's configuration: what Configure receives (a provider resource's inputs, or `kubernetes:*`
// stack config for the default provider) turned into a cluster connection and the few switches Kiln's stacks
// use. Reading and DiffConfig follow the real provider: the kubeconfig may be YAML/JSON text or a file path,
// and only a change of the cluster it points at replaces the provider (and so every object it manages).
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { kubeApi, parseKubeconfig, type KubeApi, type KubeCredentials } from '../../lib/kubernetes/api.ts';
import { isUnknown, reveal, type Json, type JsonObject } from './wire.ts';

export interface ProviderConfig {
  /** The cluster connection; undefined when the kubeconfig is not known yet (a preview) or could not be read. */
  readonly api: KubeApi | undefined;
  /** Why there is no connection, for the error an operation that needs the cluster raises. */
  readonly unreachableReason: string | undefined;
  /** Namespace given to namespaced objects that name none. */
  readonly defaultNamespace: string;
  /** Create adopts an object that exists already (server-side apply) instead of failing. */
  readonly upsertExistingObjects: boolean;
  readonly secretMutable: boolean;
  readonly configMapMutable: boolean;
}

const PREFIX = 'kubernetes:config:';

/** Configure's `variables` (`kubernetes:config:<key>` -> string, JSON for non-strings) as `<key>` -> string. */
export function configVariables(variables: Iterable<[string, string]>): Map<string, string> {
  const result = new Map<string, string>();
  for (const [name, value] of variables) if (name.startsWith(PREFIX)) result.set(name.slice(PREFIX.length), value);
  return result;
}

/** A boolean switch: the provider's setting when given, else its PULUMI_K8S_* environment variable. */
function flag(vars: Map<string, string>, name: string, envName: string, env: NodeJS.ProcessEnv): boolean {
  const value = vars.get(name);
  if (value !== undefined && !isUnknown(value)) return value === 'true';
  return env[envName] === 'true';
}

export function readProviderConfig(vars: Map<string, string>, env: NodeJS.ProcessEnv = process.env): ProviderConfig {
  const switches = {
    upsertExistingObjects: flag(vars, 'upsertExistingObjects', 'PULUMI_K8S_UPSERT_EXISTING_OBJECTS', env),
    secretMutable: flag(vars, 'enableSecretMutable', 'PULUMI_K8S_ENABLE_SECRET_MUTABLE', env),
    configMapMutable: flag(vars, 'enableConfigMapMutable', 'PULUMI_K8S_ENABLE_CONFIGMAP_MUTABLE', env),
  };
  const given = vars.get('kubeconfig');
  const namespaceSetting = vars.get('namespace');
  if ([given, vars.get('context'), namespaceSetting].some((v) => v !== undefined && isUnknown(v))) {
    return { api: undefined, unreachableReason: 'the kubeconfig is not known yet', defaultNamespace: 'default', ...switches };
  }
  try {
    const text = kubeconfigText(given, env);
    const { credentials, namespace } = activeContext(text, vars.get('context'));
    return { api: kubeApi(credentials), unreachableReason: undefined, defaultNamespace: namespaceSetting || namespace || 'default', ...switches };
  } catch (error) {
    return { api: undefined, unreachableReason: (error as Error).message, defaultNamespace: namespaceSetting || 'default', ...switches };
  }
}

/** The kubeconfig's text: the setting (contents or a path, `~` expanded), else $KUBECONFIG's first file, else ~/.kube/config. */
function kubeconfigText(given: string | undefined, env: NodeJS.ProcessEnv): string {
  if (given) {
    const path = given === '~' ? homedir() : given.startsWith('~/') ? join(homedir(), given.slice(2)) : given;
    // A path is short and names a file; anything else is the document itself.
    if (!path.includes('\n') && existsSync(path)) return readFileSync(path, 'utf8');
    return given;
  }
  const candidates = [...(env.KUBECONFIG ?? '').split(':').filter(Boolean), join(env.HOME || homedir(), '.kube', 'config')];
  const file = candidates.find((p) => existsSync(p));
  if (!file) throw new Error('no kubeconfig: set kubernetes:kubeconfig, KUBECONFIG or ~/.kube/config');
  return readFileSync(file, 'utf8');
}

interface KubeconfigDocument {
  'current-context'?: string;
  contexts?: { name: string; context?: { cluster?: string; namespace?: string } }[];
  clusters?: { name: string; cluster?: { server?: string } }[];
}

/** Credentials and namespace of the named context (default: the current one). */
function activeContext(text: string, context: string | undefined): { credentials: KubeCredentials; namespace: string | undefined } {
  let doc: KubeconfigDocument;
  try {
    doc = parse(text) as KubeconfigDocument;
  } catch (error) {
    throw new Error(`kubernetes:kubeconfig is neither a readable file nor a kubeconfig document: ${(error as Error).message}`, { cause: error });
  }
  if (typeof doc !== 'object' || doc === null) throw new Error('kubernetes:kubeconfig is neither a readable file nor a kubeconfig document');
  const selected = context ? { ...doc, 'current-context': context } : doc;
  const namespace = selected.contexts?.find((c) => c.name === selected['current-context'])?.context?.namespace;
  // JSON is YAML, so the (possibly re-pointed) document goes back through Kiln's one kubeconfig reader.
  return { credentials: parseKubeconfig(JSON.stringify(selected), 'kubernetes:kubeconfig'), namespace };
}

/** The API server URL a provider configuration points at, when it can be told (for DiffConfig). */
function activeServer(inputs: JsonObject): string | undefined {
  const plain = reveal(inputs) as JsonObject;
  try {
    const text = kubeconfigText(typeof plain.kubeconfig === 'string' ? plain.kubeconfig : undefined, process.env);
    const doc = parse(text) as KubeconfigDocument;
    const contextName = typeof plain.context === 'string' && plain.context ? plain.context : doc['current-context'];
    const clusterName = typeof plain.cluster === 'string' && plain.cluster
      ? plain.cluster
      : doc.contexts?.find((c) => c.name === contextName)?.context?.cluster;
    return doc.clusters?.find((c) => c.name === clusterName)?.cluster?.server;
  } catch {
    return undefined;
  }
}

export interface ConfigDiff {
  readonly changed: string[];
  readonly replaces: string[];
}

const sameJson = (a: Json | undefined, b: Json | undefined) => JSON.stringify(reveal(a)) === JSON.stringify(reveal(b));

/**
 * Which provider settings changed, and which of them replace the provider: an unknown kubeconfig, context or
 * cluster (it may be another cluster), or a known change of the API server they point at.
 */
export function diffConfig(olds: JsonObject, news: JsonObject): ConfigDiff {
  const keys = [...new Set([...Object.keys(olds), ...Object.keys(news)])];
  const changed = keys.filter((k) => !sameJson(olds[k], news[k])).sort();
  const identity = ['kubeconfig', 'context', 'cluster'];
  const unknown = identity.filter((k) => isUnknown(reveal(news[k])));
  if (unknown.length) return { changed: [...new Set([...changed, ...unknown])], replaces: unknown };
  const before = activeServer(olds);
  const after = activeServer(news);
  const moved = before !== undefined && after !== undefined && before !== after;
  return { changed, replaces: moved ? changed.filter((k) => identity.includes(k)) : [] };
}
