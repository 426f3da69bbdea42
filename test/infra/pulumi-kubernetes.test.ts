// The real Pulumi Kubernetes provider plugin (pulumi-resource-kubernetes, built by npm run tools), driven by the
// real Pulumi engine (Automation API, inline programs, file backend, Kiln's PULUMI_HOME) against a real local API
// server: what each operation leaves in the cluster, read back through Kiln's Kubernetes client, and how Kiln's
// objects (stacks/kiln-objects.ts) meet what operators and other controllers do to them.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as k8s from '@pulumi/kubernetes';
import type { PulumiFn, Stack } from '@pulumi/pulumi/automation/index.js';
import { GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { KubeApiError } from '../../lib/kubernetes/api.ts';
import { KILN_OBJECT_ANNOTATIONS } from '../../stacks/kiln-objects.ts';
import { openStack, runStackOperationHere, type PulumiSettings } from '../../workflows/pulumi/automation.ts';
import type { Drift } from '../../workflows/pulumi/drift.ts';
import { eventually } from '../support/eventually.ts';
import { startStackTestCluster } from '../support/gpu-cluster.ts';

let cluster: GpuCluster;
let kubeconfig: string;
let settings: PulumiSettings;

test.before(async () => {
  ({ cluster, kubeconfig, settings } = await startStackTestCluster('kiln-k8s-provider'));
});
test.after.always(() => cluster?.stop());

type Obj = { metadata: { name: string; namespace?: string; uid: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string>; managedFields?: { manager: string; operation: string }[] }; [key: string]: unknown };

/** The object, or undefined when the API server answers 404. */
async function get(path: string): Promise<Obj | undefined> {
  try {
    return await cluster.api.get<Obj>(path);
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 404) return undefined;
    throw error;
  }
}

const createNamespace = (name: string) => cluster.api.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

function stack(stackName: string, program: PulumiFn, config: Record<string, { value: string; secret?: boolean }> = {}): Promise<Stack> {
  return openStack(settings, { project: 'provider', stackName, program, config });
}

interface StateResource { urn: string; type: string; id?: string; outputs?: Record<string, unknown> }
async function stateOf(s: Stack, type: string): Promise<StateResource[]> {
  const exported = await s.exportStack();
  return (exported.deployment.resources as StateResource[]).filter((r) => r.type === type);
}

const SECRET_SIG = { '4dabf18193072939515e22adb298388d': '1b47061264138c4ac30d75fd1eb44270' };
const provider = () => new k8s.Provider('cluster', { kubeconfig });

/** An `up` as Kiln's worker runs it (a refresh first), answering the drift it found and put back. */
async function kilnUp(stackName: string, program: PulumiFn): Promise<Drift[]> {
  const drift: Drift[] = [];
  await runStackOperationHere(settings, { project: 'provider', stackName, program }, 'up', { onDrift: (d) => drift.push(d) });
  return drift;
}

/** A write as `kubectl` makes it: a merge patch under a field manager of its own. */
const kubectlPatch = (path: string, body: unknown, manager: string) =>
  cluster.api.request('PATCH', `${path}?fieldManager=${manager}`, body, 'application/merge-patch+json');

/** A Deployment whose pods fit the simulated GPU nodes (they tolerate the GPU taint) and turn Ready. */
function web(namespace: string, opts: { replicas?: number; label?: string; kiln?: boolean; selector?: string } = {}) {
  const app = { app: opts.selector ?? 'web' };
  return {
    metadata: {
      name: 'web', namespace,
      labels: { tier: opts.label ?? 'front', ...(opts.label === undefined ? { stage: 'one' } : {}) },
      ...(opts.kiln ? { annotations: KILN_OBJECT_ANNOTATIONS } : {}),
    },
    spec: {
      replicas: opts.replicas ?? 1,
      selector: { matchLabels: app },
      template: {
        metadata: { labels: app },
        spec: {
          tolerations: [{ key: GPU_TAINT.key, operator: 'Exists', effect: GPU_TAINT.effect }],
          containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ name: 'http', containerPort: 80 }] }],
        },
      },
    },
  };
}

test.serial('up creates every kind Kiln declares, waits for an awaited Deployment, updates in place and destroy removes them', async (t) => {
  const ns = 'crud';
  const program = (v: { replicas: number; label?: string; port: number }): PulumiFn => async () => {
    const p = provider();
    const namespace = new k8s.core.v1.Namespace('ns', { metadata: { name: ns } }, { provider: p });
    const opts = { provider: p, dependsOn: [namespace] };
    new k8s.apps.v1.Deployment('web', web(ns, { replicas: v.replicas, label: v.label }), opts);
    new k8s.core.v1.Service('web', { metadata: { name: 'web', namespace: ns }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: v.port, targetPort: 'http' }] } }, opts);
    new k8s.autoscaling.v2.HorizontalPodAutoscaler('web', {
      metadata: { name: 'web', namespace: ns },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] },
    }, opts);
    new k8s.policy.v1.PodDisruptionBudget('web', { metadata: { name: 'web', namespace: ns }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } } }, opts);
    new k8s.core.v1.Secret('token', { metadata: { name: 'token', namespace: ns }, stringData: { token: 'sekret' } }, opts);
  };
  const s = await stack('crud', program({ replicas: 2, port: 80 }));
  const up = await s.up();
  t.is(up.summary.result, 'succeeded');
  t.deepEqual(up.summary.resourceChanges, { create: 8 });

  // The Deployment had no skipAwait, so up returned only once both replicas were available.
  const deployment = await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`) as Obj & { status: { availableReplicas?: number }; spec: { replicas: number } };
  t.is(deployment.status.availableReplicas, 2);
  t.deepEqual(deployment.metadata.labels, { tier: 'front', stage: 'one' });
  t.truthy(await get(`/api/v1/namespaces/${ns}`));
  t.is(((await get(`/api/v1/namespaces/${ns}/services/web`)) as Obj & { spec: { ports: { port: number }[] } }).spec.ports[0]!.port, 80);
  t.truthy(await get(`/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers/web`));
  t.truthy(await get(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/web`));
  const secret = await get(`/api/v1/namespaces/${ns}/secrets/token`) as Obj & { data: Record<string, string> };
  t.is(Buffer.from(secret.data.token!, 'base64').toString(), 'sekret');

  // The state has the real provider's shape, and a Secret's data stays secret in it.
  const [state] = await stateOf(s, 'kubernetes:apps/v1:Deployment');
  t.is(state!.id, `${ns}/web`);
  t.regex(state!.outputs!.__fieldManager as string, /^pulumi-kubernetes-[0-9a-f]{8}$/);
  t.is(state!.outputs!.__initialApiVersion, 'apps/v1');
  t.like(state!.outputs!.__inputs as object, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns } });
  t.like(state!.outputs!, { metadata: { uid: deployment.metadata.uid } });
  const [secretState] = await stateOf(s, 'kubernetes:core/v1:Secret');
  t.like(secretState!.outputs!.data as object, SECRET_SIG);
  const stateFile = await readFile(join(new URL(settings.backendUrl).pathname, '.pulumi', 'stacks', 'provider', 'crud.json'), 'utf8');
  t.false(stateFile.includes('sekret') || stateFile.includes(Buffer.from('sekret').toString('base64')), 'the state file holds the Secret encrypted');

  // Update: new values are applied in place, and a label the program no longer sets is removed.
  const update = await (await stack('crud', program({ replicas: 3, label: 'back', port: 8080 }))).up();
  t.deepEqual(update.summary.resourceChanges, { update: 2, same: 6 });
  const updated = await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`) as Obj & { spec: { replicas: number }; status: { availableReplicas?: number } };
  t.is(updated.metadata.uid, deployment.metadata.uid);
  t.is(updated.spec.replicas, 3);
  t.is(updated.status.availableReplicas, 3);
  t.deepEqual(updated.metadata.labels, { tier: 'back' });
  t.is(((await get(`/api/v1/namespaces/${ns}/services/web`)) as Obj & { spec: { ports: { port: number }[] } }).spec.ports[0]!.port, 8080);

  // Nothing changed: nothing to do.
  const again = await (await stack('crud', program({ replicas: 3, label: 'back', port: 8080 }))).preview();
  t.deepEqual(again.changeSummary, { same: 8 });

  const destroy = await s.destroy();
  t.is(destroy.summary.result, 'succeeded');
  for (const path of [`/apis/apps/v1/namespaces/${ns}/deployments/web`, `/api/v1/namespaces/${ns}/services/web`, `/api/v1/namespaces/${ns}/secrets/token`, `/api/v1/namespaces/${ns}`]) {
    t.is(await get(path), undefined, `${path} is gone`);
  }
});

test.serial('Kiln\'s objects are replaced without a field conflict: a rename creates the new one first, a new Deployment selector deletes the old one at once', async (t) => {
  const ns = 'replace';
  await createNamespace(ns);
  const program = (serviceName: string, selector: string): PulumiFn => async () => {
    const p = provider();
    new k8s.core.v1.Service('svc', { metadata: { name: serviceName, namespace: ns, annotations: KILN_OBJECT_ANNOTATIONS }, spec: { selector: { app: selector }, ports: [{ port: 80 }] } }, { provider: p });
    new k8s.apps.v1.Deployment('web', web(ns, { kiln: true, selector }), { provider: p });
  };
  await kilnUp('replace', program('first', 'web'));
  const before = await eventually('the first pod Ready', async () => {
    const d = await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`) as Obj & { status?: { readyReplicas?: number } };
    return d.status?.readyReplicas === 1 && d;
  });
  t.truthy(await get(`/api/v1/namespaces/${ns}/services/first`));

  const preview = await (await stack('replace', program('second', 'web2'))).preview();
  t.deepEqual(preview.changeSummary, { replace: 2, same: 2 });
  await kilnUp('replace', program('second', 'web2'));
  t.is(await get(`/api/v1/namespaces/${ns}/services/first`), undefined);
  t.truthy(await get(`/api/v1/namespaces/${ns}/services/second`));
  const after = await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`) as Obj & { spec: { selector: { matchLabels: Record<string, string> } } };
  t.not(after.metadata.uid, before.metadata.uid);
  t.deepEqual(after.spec.selector.matchLabels, { app: 'web2' });
  await eventually('the new Deployment\'s pod Ready, the old one\'s gone', async () => {
    const pods = await cluster.api.get<{ items: { metadata: { labels: Record<string, string> }; status: { conditions?: { type: string; status: string }[] } }[] }>(`/api/v1/namespaces/${ns}/pods`);
    return pods.items.length === 1 && pods.items[0]!.metadata.labels.app === 'web2'
      && pods.items[0]!.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  });
  t.pass();
});

test.serial('drift: after kubectl scale and edit of Kiln\'s objects, the next up reports the declared fields that moved, puts them back and leaves the rest', async (t) => {
  const ns = 'drift-kiln';
  await createNamespace(ns);
  const program = (replicas: number, tier = 'front'): PulumiFn => async () => {
    const p = provider();
    new k8s.apps.v1.Deployment('web', web(ns, { kiln: true, replicas, label: tier }), { provider: p });
    new k8s.core.v1.ConfigMap('settings', { metadata: { name: 'settings', namespace: ns, labels: { owner: 'kiln' }, annotations: KILN_OBJECT_ANNOTATIONS }, data: { mode: 'fast' } }, { provider: p });
  };
  t.deepEqual(await kilnUp('drift-kiln', program(2)), []);
  const deployment = `/apis/apps/v1/namespaces/${ns}/deployments/web`;
  const settingsMap = `/api/v1/namespaces/${ns}/configmaps/settings`;
  // An operator scales by hand; another tool relabels, and adds a label, an annotation and data Kiln does not declare.
  await kubectlPatch(`${deployment}/scale`, { spec: { replicas: 4 } }, 'kubectl-scale');
  await kubectlPatch(settingsMap, { metadata: { labels: { owner: 'someone', team: 'ml' } }, data: { extra: 'theirs' } }, 'sre-tooling');
  await kubectlPatch(deployment, { metadata: { annotations: { 'example.com/owner': 'sre' } } }, 'sre-tooling');
  // `kubectl annotate` (any `kubectl...` manager writing the object itself) is another matter: the provider takes
  // those fields over as if it had written them, so what Kiln does not declare goes at Kiln's next change.
  await kubectlPatch(deployment, { metadata: { annotations: { 'example.com/note': 'by hand' } } }, 'kubectl-annotate');

  // Kiln's next change (a new tier label) goes through, and so do the fields it declares.
  const drift = await kilnUp('drift-kiln', program(2, 'back'));
  t.deepEqual(drift.map((d) => [d.resource, d.path, d.recorded, d.live]).sort(), [
    ['kubernetes:apps/v1:Deployment web', 'spec.replicas', 2, 4],
    ['kubernetes:core/v1:ConfigMap settings', 'metadata.labels.owner', 'kiln', 'someone'],
  ]);
  const live = await get(deployment) as Obj & { spec: { replicas: number } };
  t.is(live.spec.replicas, 2);
  t.like(live.metadata.labels, { tier: 'back' });
  t.is(live.metadata.annotations?.['example.com/owner'], 'sre', 'a field Kiln does not declare stays');
  t.is(live.metadata.annotations?.['example.com/note'], undefined, 'what kubectl wrote on the object is the provider\'s now');
  t.like(await get(settingsMap) as object, { metadata: { labels: { owner: 'kiln', team: 'ml' } }, data: { mode: 'fast', extra: 'theirs' } });

  // With nothing changed out of band, an up finds no drift and changes nothing.
  const rv = (await get(deployment))!.metadata.resourceVersion;
  t.deepEqual(await kilnUp('drift-kiln', program(2, 'back')), []);
  t.is((await get(deployment))!.metadata.resourceVersion, rv);

  // A delete after drift removes what Kiln made.
  await kubectlPatch(`${deployment}/scale`, { spec: { replicas: 3 } }, 'kubectl-scale');
  await runStackOperationHere(settings, { project: 'provider', stackName: 'drift-kiln', program: program(2, 'back') }, 'destroy');
  t.is(await get(deployment), undefined);
  t.is(await get(settingsMap), undefined);
});

test.serial('refresh shows an out-of-band change, which a plain object cannot take back (a field conflict: why Kiln\'s objects force); after an out-of-band delete it drops the object and up recreates it', async (t) => {
  const ns = 'drift';
  await createNamespace(ns);
  const program: PulumiFn = async () => {
    new k8s.core.v1.ConfigMap('settings', { metadata: { name: 'settings', namespace: ns, labels: { owner: 'pulumi' } }, data: { mode: 'fast' } }, { provider: provider() });
  };
  const s = await stack('drift', program);
  await s.up();
  const path = `/api/v1/namespaces/${ns}/configmaps/settings`;
  await kubectlPatch(path, { metadata: { labels: { owner: 'someone', extra: 'x' } } }, 'sre-tooling');

  const refresh = await s.refresh();
  t.like(refresh.summary.resourceChanges, { update: 1 });
  const [state] = await stateOf(s, 'kubernetes:core/v1:ConfigMap');
  t.like(state!.outputs!, { metadata: { labels: { owner: 'someone', extra: 'x' } } });
  for (const operation of [() => s.preview({ diff: true }), () => s.up()]) {
    const conflict = await t.throwsAsync(operation());
    t.regex(conflict.message, /Server-Side Apply field conflict[\s\S]*conflict with "sre-tooling"/);
  }
  t.like(await get(path) as object, { metadata: { labels: { owner: 'someone' } } });

  await cluster.api.request('DELETE', path);
  const refreshAfterDelete = await s.refresh();
  t.like(refreshAfterDelete.summary.resourceChanges, { delete: 1 });
  t.deepEqual(await stateOf(s, 'kubernetes:core/v1:ConfigMap'), []);
  const up = await s.up();
  t.deepEqual(up.summary.resourceChanges, { create: 1, same: 2 });
  t.like(await get(path) as object, { data: { mode: 'fast' } });
});

test.serial('preview shows the plan and changes nothing in the cluster', async (t) => {
  const ns = 'preview';
  await createNamespace(ns);
  const program = (tier: string, mode = 'fast'): PulumiFn => async () => {
    new k8s.core.v1.ConfigMap('settings', { metadata: { name: 'settings', namespace: ns, labels: { tier } }, data: { mode } }, { provider: provider() });
  };
  const path = `/api/v1/namespaces/${ns}/configmaps/settings`;
  const planned = await (await stack('preview', program('front'))).preview({ diff: true });
  t.deepEqual(planned.changeSummary, { create: 3 });
  t.regex(planned.stdout, /mode\s*: "fast"/);
  t.is(await get(path), undefined);

  await (await stack('preview', program('front'))).up();
  const created = await get(path) as Obj;
  const update = await (await stack('preview', program('back'))).preview({ diff: true });
  t.deepEqual(update.changeSummary, { update: 1, same: 2 });
  t.regex(update.stdout, /"front" => "back"/);
  // ConfigMap data is immutable to the provider (unless enableConfigMapMutable): a new value is a replacement.
  const replace = await (await stack('preview', program('front', 'slow'))).preview({ diff: true });
  t.deepEqual(replace.changeSummary, { replace: 1, same: 2 });
  const unchanged = await get(path) as Obj;
  t.like(unchanged, { metadata: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion, labels: { tier: 'front' } }, data: { mode: 'fast' } });
});

test.serial('adoption: a stack applied where its objects already exist takes them over, even fields another manager wrote', async (t) => {
  const ns = 'adopt';
  await createNamespace(ns);
  const path = `/api/v1/namespaces/${ns}/configmaps/existing`;
  // Written by someone else (a restored database meets the objects an earlier stack made, or a re-registered cluster).
  await cluster.api.request('POST', `/api/v1/namespaces/${ns}/configmaps?fieldManager=kubectl-create`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'existing', labels: { owner: 'kubectl' } }, data: { owner: 'kubectl', extra: 'kept' } });
  const before = await get(path);
  const program: PulumiFn = async () => {
    new k8s.core.v1.ConfigMap('existing', { metadata: { name: 'existing', namespace: ns, labels: { owner: 'kiln' }, annotations: KILN_OBJECT_ANNOTATIONS }, data: { owner: 'kiln' } }, { provider: provider() });
  };
  await kilnUp('adopt', program);
  const live = await get(path) as Obj & { data: Record<string, string> };
  t.is(live.metadata.uid, before!.metadata.uid, 'the object is the same one, not made again');
  t.deepEqual(live.data, { owner: 'kiln', extra: 'kept' });
  t.is(live.metadata.labels?.owner, 'kiln');
  const [state] = await stateOf(await stack('adopt', program), 'kubernetes:core/v1:ConfigMap');
  t.is(state!.id, `${ns}/existing`);
  t.true(live.metadata.managedFields!.some((f) => f.manager === state!.outputs!.__fieldManager && f.operation === 'Apply'));

  // Without Kiln's annotations the real provider refuses the fields another manager holds.
  await cluster.api.request('POST', `/api/v1/namespaces/${ns}/configmaps?fieldManager=kubectl-create`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' }, data: { owner: 'kubectl' } });
  const refused = await t.throwsAsync((await stack('adopt-plain', async () => {
    new k8s.core.v1.ConfigMap('plain', { metadata: { name: 'plain', namespace: ns }, data: { owner: 'pulumi' } }, { provider: provider() });
  })).up());
  t.regex(refused.message, /conflict/i);
});

test.serial('an object read with .get() is the live object from the cluster, and the stack does not own it', async (t) => {
  const ns = 'read';
  await createNamespace(ns);
  await cluster.api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs' }, data: { owner: 'someone' } });
  const s = await stack('read', async () => {
    const theirs = k8s.core.v1.ConfigMap.get('theirs', `${ns}/theirs`, { provider: provider() });
    return { data: theirs.data, uid: theirs.metadata.uid };
  });
  const up = await s.up();
  const live = await get(`/api/v1/namespaces/${ns}/configmaps/theirs`);
  t.deepEqual(up.outputs.data!.value, { owner: 'someone' });
  t.is(up.outputs.uid!.value, live!.metadata.uid);
  await s.destroy();
  t.truthy(await get(`/api/v1/namespaces/${ns}/configmaps/theirs`), 'destroy leaves an object the stack only read');
});

test.serial('an unnamed object is named <resource name>-<8 hex>, marked autonamed, keeps its name across updates, and a replacement gets a new one', async (t) => {
  const ns = 'autoname';
  await createNamespace(ns);
  const program = (tier: string, mode = 'fast'): PulumiFn => async () => {
    const settings = new k8s.core.v1.ConfigMap('settings', { metadata: { namespace: ns, labels: { tier } }, data: { mode } }, { provider: provider() });
    return { name: settings.metadata.name };
  };
  const up = await (await stack('autoname', program('front'))).up();
  const name = up.outputs.name!.value as string;
  t.regex(name, /^settings-[0-9a-f]{8}$/);
  const live = await get(`/api/v1/namespaces/${ns}/configmaps/${name}`);
  t.is(live?.metadata.annotations?.['pulumi.com/autonamed'], 'true');

  const preview = await (await stack('autoname', program('back'))).preview({ diff: true });
  t.deepEqual(preview.changeSummary, { update: 1, same: 2 });
  const update = await (await stack('autoname', program('back'))).up();
  t.is(update.outputs.name!.value, name);
  t.like(await get(`/api/v1/namespaces/${ns}/configmaps/${name}`) as object, { metadata: { uid: live!.metadata.uid, labels: { tier: 'back' } } });

  // A replacement of an autonamed object is created first under a new name, then the old one is deleted.
  const replaced = await (await stack('autoname', program('back', 'slow'))).up();
  const newName = replaced.outputs.name!.value as string;
  t.regex(newName, /^settings-[0-9a-f]{8}$/);
  t.not(newName, name);
  t.like(await get(`/api/v1/namespaces/${ns}/configmaps/${newName}`) as object, { data: { mode: 'slow' } });
  t.is(await get(`/api/v1/namespaces/${ns}/configmaps/${name}`), undefined);
});

test.serial('the root stacks/index.ts program, configured as an enterprise would, puts the vLLM Deployment and Service in the cluster', async (t) => {
  const ns = 'models';
  await createNamespace(ns);
  const { default: program } = await import('../../stacks/index.ts');
  const s = await openStack(settings, {
    project: 'kiln',
    stackName: 'llama',
    program: async () => program(),
    config: {
      'kiln:component': { value: 'vllm-deployment' },
      'kiln:model': { value: 'meta-llama/Llama-3.1-8B-Instruct' },
      'kiln:gpuType': { value: 'nvidia-l4' },
      'kiln:gpusPerReplica': { value: '1' },
      'kiln:replicas': { value: '2' },
      'kiln:namespace': { value: ns },
      'kubernetes:kubeconfig': { value: kubeconfig, secret: true },
    },
  });
  const up = await s.up();
  t.is(up.summary.result, 'succeeded');
  t.is(up.outputs.serviceUrl!.value, `http://llama.${ns}.svc.cluster.local`);

  const deployment = await get(`/apis/apps/v1/namespaces/${ns}/deployments/llama`) as Obj & { spec: { replicas: number; template: { spec: { nodeSelector: Record<string, string> } } } };
  t.is(deployment.spec.replicas, 2);
  t.deepEqual(deployment.spec.template.spec.nodeSelector, { [GPU_TYPE_LABEL]: 'nvidia-l4' });
  t.truthy(await get(`/api/v1/namespaces/${ns}/services/llama`));
  const ready = await eventually('two available replicas', async () => {
    const d = await get(`/apis/apps/v1/namespaces/${ns}/deployments/llama`) as { status?: { availableReplicas?: number } };
    return d.status?.availableReplicas === 2 ? d.status.availableReplicas : undefined;
  });
  t.is(ready, 2);

  await s.destroy();
  t.is(await get(`/apis/apps/v1/namespaces/${ns}/deployments/llama`), undefined);
  t.is(await get(`/api/v1/namespaces/${ns}/services/llama`), undefined);
});
