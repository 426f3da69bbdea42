// Kiln's stand-in for the Pulumi Kubernetes provider plugin, driven by the real Pulumi engine (Automation
// API, inline programs, file backend, Kiln's PULUMI_HOME) against a real local API server: what each
// operation leaves in the cluster, read back through Kiln's Kubernetes client.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as k8s from '@pulumi/kubernetes';
import type { PulumiFn, Stack } from '@pulumi/pulumi/automation/index.js';
import { GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { KubeApiError } from '../../lib/kubernetes/api.ts';
import { inspectPlugin } from '../../infra/tools/pulumi-plugins.ts';
import { PULUMI_PLUGINS } from '../../infra/tools/versions.ts';
import { openStack, type PulumiSettings } from '../../workflows/pulumi/automation.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';
import { testPulumiSettings } from '../support/pulumi.ts';

let cluster: GpuCluster;
let kubeconfig: string;
let settings: PulumiSettings;

test.before(async () => {
  cluster = await startTestGpuCluster();
  kubeconfig = await readFile(cluster.kubeconfig, 'utf8');
  settings = await testPulumiSettings('kiln-standin');
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
  return openStack(settings, { project: 'standin', stackName, program, config });
}

interface StateResource { urn: string; type: string; id?: string; outputs?: Record<string, unknown> }
async function stateOf(s: Stack, type: string): Promise<StateResource[]> {
  const exported = await s.exportStack();
  return (exported.deployment.resources as StateResource[]).filter((r) => r.type === type);
}

const SECRET_SIG = { '4dabf18193072939515e22adb298388d': '1b47061264138c4ac30d75fd1eb44270' };
const provider = (extra: Partial<k8s.ProviderArgs> = {}) => new k8s.Provider('cluster', { kubeconfig, ...extra });

/** A Deployment whose pods fit the simulated GPU nodes (they tolerate the GPU taint) and turn Ready. */
function web(namespace: string, opts: { replicas?: number; label?: string; skipAwait?: boolean; selector?: string } = {}) {
  const app = { app: opts.selector ?? 'web' };
  return {
    metadata: {
      name: 'web', namespace,
      labels: { tier: opts.label ?? 'front', ...(opts.label === undefined ? { stage: 'one' } : {}) },
      ...(opts.skipAwait ? { annotations: { 'pulumi.com/skipAwait': 'true' } } : {}),
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

test.serial('the stand-in is what Pulumi runs for kubernetes here', (t) => {
  const installed = inspectPlugin(PULUMI_PLUGINS.find((p) => p.name === 'kubernetes')!);
  t.not(installed.state, 'missing');
  t.log(`kubernetes plugin: ${installed.state}`);
});

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
  t.like((secretState!.outputs!.__inputs as { stringData: object }).stringData, SECRET_SIG);
  const stateFile = await readFile(join(new URL(settings.backendUrl).pathname, '.pulumi', 'stacks', 'standin', 'crud.json'), 'utf8');
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

test.serial('a rename replaces the object (the old one is gone); a new Deployment selector deletes it first and recreates it', async (t) => {
  const ns = 'replace';
  await createNamespace(ns);
  const program = (serviceName: string, selector: string): PulumiFn => async () => {
    const p = provider();
    new k8s.core.v1.Service('svc', { metadata: { name: serviceName, namespace: ns }, spec: { selector: { app: selector }, ports: [{ port: 80 }] } }, { provider: p });
    new k8s.apps.v1.Deployment('web', web(ns, { skipAwait: true, selector }), { provider: p });
  };
  await (await stack('replace', program('first', 'web'))).up();
  const before = await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
  t.truthy(await get(`/api/v1/namespaces/${ns}/services/first`));

  const preview = await (await stack('replace', program('second', 'web2'))).preview();
  t.deepEqual(preview.changeSummary, { replace: 2, same: 2 });
  const up = await (await stack('replace', program('second', 'web2'))).up();
  t.deepEqual(up.summary.resourceChanges, { replace: 2, same: 2 });
  t.is(await get(`/api/v1/namespaces/${ns}/services/first`), undefined);
  t.truthy(await get(`/api/v1/namespaces/${ns}/services/second`));
  const after = await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`) as Obj & { spec: { selector: { matchLabels: Record<string, string> } } };
  t.not(after.metadata.uid, before!.metadata.uid);
  t.deepEqual(after.spec.selector.matchLabels, { app: 'web2' });
});

test.serial('refresh shows an out-of-band change (and the next up puts the program back); after an out-of-band delete it drops the object and up recreates it', async (t) => {
  const ns = 'drift';
  await createNamespace(ns);
  const program: PulumiFn = async () => {
    new k8s.core.v1.ConfigMap('settings', { metadata: { name: 'settings', namespace: ns, labels: { owner: 'pulumi' } }, data: { mode: 'fast' } }, { provider: provider() });
  };
  const s = await stack('drift', program);
  await s.up();
  const path = `/api/v1/namespaces/${ns}/configmaps/settings`;
  await cluster.api.request('PATCH', path, { metadata: { labels: { owner: 'someone', extra: 'x' } } }, 'application/merge-patch+json');

  const refresh = await s.refresh();
  t.like(refresh.summary.resourceChanges, { update: 1 });
  const [state] = await stateOf(s, 'kubernetes:core/v1:ConfigMap');
  t.like(state!.outputs!, { metadata: { labels: { owner: 'someone', extra: 'x' } } });
  const preview = await s.preview({ diff: true });
  t.deepEqual(preview.changeSummary, { update: 1, same: 2 });
  await s.up();
  t.like(await get(path) as object, { data: { mode: 'fast' }, metadata: { labels: { owner: 'pulumi' } } });

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

test.serial('an object that exists already is an error, unless the provider has upsertExistingObjects: then it is adopted', async (t) => {
  const ns = 'upsert';
  await createNamespace(ns);
  const path = `/api/v1/namespaces/${ns}/configmaps/existing`;
  await cluster.api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'existing' }, data: { owner: 'kubectl', extra: 'kept' } });
  const program = (upsert: boolean): PulumiFn => async () => {
    new k8s.core.v1.ConfigMap('existing', { metadata: { name: 'existing', namespace: ns }, data: { owner: 'pulumi' } }, { provider: provider({ upsertExistingObjects: upsert }) });
  };
  const refused = await t.throwsAsync((await stack('upsert', program(false))).up());
  t.regex(refused.message, /already exists/);
  t.like(await get(path) as object, { data: { owner: 'kubectl' } });

  const adopted = await (await stack('upsert', program(true))).up();
  t.is(adopted.summary.result, 'succeeded');
  const live = await get(path) as Obj & { data: Record<string, string> };
  t.deepEqual(live.data, { owner: 'pulumi', extra: 'kept' });
  const [state] = await stateOf(await stack('upsert', program(true)), 'kubernetes:core/v1:ConfigMap');
  t.is(state!.id, `${ns}/existing`);
  t.true(live.metadata.managedFields!.some((f) => f.manager === state!.outputs!.__fieldManager && f.operation === 'Apply'));
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
