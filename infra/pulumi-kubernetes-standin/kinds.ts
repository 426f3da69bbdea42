// Which Kubernetes kind a Pulumi type token names, where its objects live in the API, and which of its fields
// cannot change in place. Kinds Kiln uses (and common built-ins) come from a table; any other kind, such as
// a custom resource, is looked up once through API discovery.
import type { KubeApi } from '../../lib/kubernetes/api.ts';

export interface Gvk {
  /** `v1` for the core group, else `group/version`. */
  readonly apiVersion: string;
  readonly kind: string;
}

export interface KindInfo {
  /** The resource's plural name in API paths, e.g. `deployments`. */
  readonly plural: string;
  readonly namespaced: boolean;
}

/** `kubernetes:apps/v1:Deployment` -> apps/v1 Deployment; `kubernetes:core/v1:Service` -> v1 Service. */
export function gvkOfType(type: string): Gvk {
  const match = /^kubernetes:([^:]+):([^:]+)$/.exec(type);
  if (!match) throw new Error(`"${type}" is not a Kubernetes resource type token`);
  const [, groupVersion, kind] = match as unknown as [string, string, string];
  return { apiVersion: groupVersion.startsWith('core/') ? groupVersion.slice('core/'.length) : groupVersion, kind };
}

/** The type token at the end of a URN (`urn:pulumi:stack::project::parent$type::name`). */
export function typeOfUrn(urn: string): string {
  const qualified = urn.split('::')[2] ?? '';
  return qualified.split('$').pop() ?? qualified;
}

/** The resource name at the end of a URN. */
export function nameOfUrn(urn: string): string {
  return urn.split('::').slice(3).join('::');
}

const key = (gvk: Gvk) => `${gvk.apiVersion}/${gvk.kind}`;

const namespaced = (plural: string): KindInfo => ({ plural, namespaced: true });
const clusterScoped = (plural: string): KindInfo => ({ plural, namespaced: false });

const KNOWN_KINDS: Readonly<Record<string, KindInfo>> = {
  'v1/Namespace': clusterScoped('namespaces'),
  'v1/Node': clusterScoped('nodes'),
  'v1/PersistentVolume': clusterScoped('persistentvolumes'),
  'v1/ConfigMap': namespaced('configmaps'),
  'v1/Endpoints': namespaced('endpoints'),
  'v1/LimitRange': namespaced('limitranges'),
  'v1/PersistentVolumeClaim': namespaced('persistentvolumeclaims'),
  'v1/Pod': namespaced('pods'),
  'v1/ReplicationController': namespaced('replicationcontrollers'),
  'v1/ResourceQuota': namespaced('resourcequotas'),
  'v1/Secret': namespaced('secrets'),
  'v1/Service': namespaced('services'),
  'v1/ServiceAccount': namespaced('serviceaccounts'),
  'apps/v1/DaemonSet': namespaced('daemonsets'),
  'apps/v1/Deployment': namespaced('deployments'),
  'apps/v1/ReplicaSet': namespaced('replicasets'),
  'apps/v1/StatefulSet': namespaced('statefulsets'),
  'autoscaling/v1/HorizontalPodAutoscaler': namespaced('horizontalpodautoscalers'),
  'autoscaling/v2/HorizontalPodAutoscaler': namespaced('horizontalpodautoscalers'),
  'batch/v1/CronJob': namespaced('cronjobs'),
  'batch/v1/Job': namespaced('jobs'),
  'policy/v1/PodDisruptionBudget': namespaced('poddisruptionbudgets'),
  'networking.k8s.io/v1/Ingress': namespaced('ingresses'),
  'networking.k8s.io/v1/IngressClass': clusterScoped('ingressclasses'),
  'networking.k8s.io/v1/NetworkPolicy': namespaced('networkpolicies'),
  'rbac.authorization.k8s.io/v1/ClusterRole': clusterScoped('clusterroles'),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': clusterScoped('clusterrolebindings'),
  'rbac.authorization.k8s.io/v1/Role': namespaced('roles'),
  'rbac.authorization.k8s.io/v1/RoleBinding': namespaced('rolebindings'),
  'scheduling.k8s.io/v1/PriorityClass': clusterScoped('priorityclasses'),
  'storage.k8s.io/v1/StorageClass': clusterScoped('storageclasses'),
  'apiextensions.k8s.io/v1/CustomResourceDefinition': clusterScoped('customresourcedefinitions'),
};

/** The API server knows no such apiVersion/kind (e.g. a custom resource whose definition is missing). */
export class UnknownKindError extends Error {}

/** Answers kind questions from the table, else from the API server's discovery document for the group version. */
export class Kinds {
  private readonly discovered = new Map<string, Promise<Map<string, KindInfo>>>();
  /** The cluster connection, once configured. */
  private readonly api: () => KubeApi | undefined;
  constructor(api: () => KubeApi | undefined) {
    this.api = api;
  }

  /** The table's answer, if it has one (no API call). */
  static known(gvk: Gvk): KindInfo | undefined {
    return KNOWN_KINDS[key(gvk)];
  }

  async info(gvk: Gvk): Promise<KindInfo> {
    const known = Kinds.known(gvk);
    if (known) return known;
    const api = this.api();
    if (!api) throw new UnknownKindError(`${key(gvk)} is not a kind this stand-in knows, and no cluster is configured to ask`);
    let kinds = this.discovered.get(gvk.apiVersion);
    if (!kinds) {
      kinds = discover(api, gvk.apiVersion);
      this.discovered.set(gvk.apiVersion, kinds);
      // A failed lookup (e.g. a CRD created later in the same update) is asked again next time.
      kinds.catch(() => this.discovered.delete(gvk.apiVersion));
    }
    const info = (await kinds.catch(() => new Map<string, KindInfo>())).get(gvk.kind);
    if (!info) {
      this.discovered.delete(gvk.apiVersion);
      throw new UnknownKindError(`the Kubernetes API server does not serve ${key(gvk)}; if it is a custom resource, create its CustomResourceDefinition first`);
    }
    return info;
  }

  /** Whether objects of the kind live in a namespace; a kind nobody can answer for is taken as namespaced, as the real provider does. */
  async isNamespaced(gvk: Gvk): Promise<boolean> {
    return (await this.info(gvk).catch(() => namespaced(''))).namespaced;
  }
}

async function discover(api: KubeApi, apiVersion: string): Promise<Map<string, KindInfo>> {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const list = await api.get<{ resources?: { name: string; kind: string; namespaced: boolean }[] }>(base);
  const kinds = new Map<string, KindInfo>();
  // Subresources (`deployments/scale`) share their parent's kind name in some groups; the main resource comes first.
  for (const r of list.resources ?? []) if (!r.name.includes('/') && !kinds.has(r.kind)) kinds.set(r.kind, { plural: r.name, namespaced: r.namespaced });
  return kinds;
}

/** API path of a kind's collection (in a namespace when namespaced). */
export function collectionPath(gvk: Gvk, info: KindInfo, namespace: string | undefined): string {
  const base = gvk.apiVersion.includes('/') ? `/apis/${gvk.apiVersion}` : `/api/${gvk.apiVersion}`;
  const ns = info.namespaced ? `/namespaces/${encodeURIComponent(namespace || 'default')}` : '';
  return `${base}${ns}/${info.plural}`;
}

export function objectPath(gvk: Gvk, info: KindInfo, namespace: string | undefined, name: string): string {
  return `${collectionPath(gvk, info, namespace)}/${encodeURIComponent(name)}`;
}

const SELECTOR = ['spec.selector'];
const POD_TEMPLATE_IMMUTABLE = [
  'spec.activeDeadlineSeconds', 'spec.affinity', 'spec.nodeName', 'spec.nodeSelector', 'spec.restartPolicy', 'spec.serviceAccountName',
  'spec.securityContext', 'spec.tolerations', 'spec.volumes', 'spec.containers', 'spec.initContainers', 'spec.hostNetwork',
];

/**
 * Fields whose change makes Kubernetes refuse an in-place update, so the object is replaced instead, as the
 * real provider's table says (paths in the inputs; `*` is any array element). `metadata.name` and
 * `metadata.namespace` apply to every kind.
 */
const REPLACE_ON_CHANGE: Readonly<Record<string, readonly string[]>> = {
  'apps/v1/Deployment': SELECTOR,
  'apps/v1/DaemonSet': SELECTOR,
  'apps/v1/StatefulSet': [...SELECTOR, 'spec.podManagementPolicy', 'spec.revisionHistoryLimit', 'spec.serviceName', 'spec.volumeClaimTemplates'],
  'batch/v1/Job': [...SELECTOR, 'spec.completions', 'spec.parallelism', 'spec.template'],
  'v1/Service': ['spec.clusterIP'],
  'v1/Pod': POD_TEMPLATE_IMMUTABLE,
  'v1/PersistentVolumeClaim': ['spec.accessModes', 'spec.selector', 'spec.storageClassName', 'spec.volumeName'],
  'v1/ResourceQuota': ['spec.scopes'],
  'rbac.authorization.k8s.io/v1/RoleBinding': ['roleRef'],
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ['roleRef'],
  'storage.k8s.io/v1/StorageClass': ['parameters', 'provisioner'],
};

export interface MutabilityOptions {
  /** `enableSecretMutable`: Secret data changes in place instead of replacing the Secret. */
  readonly secretMutable: boolean;
  /** `enableConfigMapMutable`: likewise for ConfigMaps. */
  readonly configMapMutable: boolean;
}

/** Input paths (dot-separated, `*` for any array element) whose change replaces an object of this kind. */
export function replaceOnChangePaths(gvk: Gvk, immutable: boolean, options: MutabilityOptions): string[] {
  const paths = ['metadata.name', 'metadata.namespace', ...(REPLACE_ON_CHANGE[key(gvk)] ?? [])];
  if (key(gvk) === 'v1/Secret') paths.push('type', ...(!options.secretMutable || immutable ? ['data', 'stringData'] : []));
  if (key(gvk) === 'v1/ConfigMap' && (!options.configMapMutable || immutable)) paths.push('data', 'binaryData');
  return paths;
}

/**
 * Kinds whose deletion is not awaited when `pulumi.com/skipAwait` is set (for the others the real provider
 * always waits until the object is gone).
 */
export function deletionSkipsAwait(gvk: Gvk): boolean {
  return ['v1/Namespace', 'v1/Pod', 'v1/ReplicationController', 'apps/v1/DaemonSet', 'apps/v1/Deployment', 'apps/v1/StatefulSet', 'batch/v1/Job'].includes(key(gvk));
}
