// The stand-in Kubernetes provider's rules on plain values (no engine, no cluster): diff and replacement,
// naming, provider configuration, secrets.
import test from 'ava';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diffObject, formatPath, parsePath } from '../../infra/pulumi-kubernetes-standin/diff.ts';
import { replaceOnChangePaths } from '../../infra/pulumi-kubernetes-standin/kinds.ts';
import { assignName, assignNamespace } from '../../infra/pulumi-kubernetes-standin/naming.ts';
import { configVariables, diffConfig, readProviderConfig } from '../../infra/pulumi-kubernetes-standin/provider-config.ts';
import { checkpoint } from '../../infra/pulumi-kubernetes-standin/state.ts';
import { secret, UNKNOWN, type JsonObject } from '../../infra/pulumi-kubernetes-standin/wire.ts';

const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment' };
const options = { secretMutable: false, configMapMutable: false };
const deployment = (over: { name?: string; labels?: JsonObject; app?: string; replicas?: number; annotations?: JsonObject } = {}): JsonObject => ({
  ...DEPLOYMENT,
  metadata: { name: over.name ?? 'web', namespace: 'default', labels: over.labels ?? { tier: 'front' }, ...(over.annotations ? { annotations: over.annotations } : {}) },
  spec: { replicas: over.replicas ?? 1, selector: { matchLabels: { app: over.app ?? 'web' } } },
});
/** What the API server answers for the object: the inputs plus fields it owns or defaults. */
const live = (inputs: JsonObject): JsonObject => {
  const metadata = inputs.metadata as JsonObject;
  const spec = inputs.spec as JsonObject;
  return {
    ...inputs,
    metadata: { ...metadata, uid: 'u1', resourceVersion: '7', generation: 2, annotations: { ...(metadata.annotations as JsonObject ?? {}), 'deployment.kubernetes.io/revision': '1' } },
    spec: { ...spec, strategy: { type: 'RollingUpdate' }, progressDeadlineSeconds: 600 },
    status: { availableReplicas: 1 },
  };
};
const diff = (oldInputs: JsonObject, newInputs: JsonObject, ignoreChanges: string[] = []) =>
  diffObject({ oldInputs, oldLive: live(oldInputs), newInputs, namespaced: true, replacePaths: replaceOnChangePaths(DEPLOYMENT, false, options), ignoreChanges });

test('equal inputs are no change, whatever the cluster added', (t) => {
  t.deepEqual(diff(deployment(), deployment()), { changed: false, replaces: [], deleteBeforeReplace: false, detailedDiff: {} });
});

test('a changed, added or removed field is an in-place update at its property path', (t) => {
  const result = diff(deployment(), deployment({ replicas: 3, labels: { stage: 'two' }, annotations: { 'pulumi.com/skipAwait': 'true' } }));
  t.deepEqual(result.detailedDiff, {
    'spec.replicas': { kind: 'UPDATE', inputDiff: false },
    'metadata.labels.stage': { kind: 'ADD', inputDiff: false },
    'metadata.labels.tier': { kind: 'DELETE', inputDiff: true },
    'metadata.annotations': { kind: 'ADD', inputDiff: false },
  });
  t.deepEqual(result.replaces, []);
});

test('a new selector replaces a fixed-name Deployment deleting it first; a new name replaces it creating first', (t) => {
  const selector = diff(deployment(), deployment({ app: 'web2' }));
  t.deepEqual(selector.replaces, ['spec.selector.matchLabels.app']);
  t.true(selector.deleteBeforeReplace);
  const renamed = diff(deployment(), deployment({ name: 'web2' }));
  t.deepEqual(renamed.replaces, ['metadata.name']);
  t.false(renamed.deleteBeforeReplace);
  const autonamed = deployment({ app: 'web2', annotations: { 'pulumi.com/autonamed': 'true' } });
  t.false(diff({ ...deployment(), metadata: autonamed.metadata! }, autonamed).deleteBeforeReplace);
});

test('a Service clusterIP change replaces it; ignoreChanges hides a change', (t) => {
  const service = (clusterIP: string): JsonObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'default' }, spec: { clusterIP } });
  const result = diffObject({
    oldInputs: service('10.0.0.1'), oldLive: service('10.0.0.1'), newInputs: service('10.0.0.2'), namespaced: true,
    replacePaths: replaceOnChangePaths({ apiVersion: 'v1', kind: 'Service' }, false, options), ignoreChanges: [],
  });
  t.deepEqual(result.replaces, ['spec.clusterIP']);
  t.false(diff(deployment(), deployment({ replicas: 4 }), ['spec.replicas']).changed);
});

test('an unknown new value (preview) counts as a change', (t) => {
  const result = diff(deployment(), { ...deployment(), spec: { replicas: UNKNOWN, selector: { matchLabels: { app: 'web' } } } });
  t.deepEqual(result.detailedDiff, { 'spec.replicas': { kind: 'UPDATE', inputDiff: false } });
});

test('property paths quote keys with dots and parse back', (t) => {
  const path = ['metadata', 'annotations', 'pulumi.com/skipAwait'];
  t.is(formatPath(path), 'metadata.annotations["pulumi.com/skipAwait"]');
  t.deepEqual(parsePath(formatPath(path)), path);
  t.deepEqual(parsePath('spec.template.spec.containers[0].image'), ['spec', 'template', 'spec', 'containers', 0, 'image']);
});

test('an unnamed object is named from the seed, marked autonamed, keeps its old name, and gets the default namespace', (t) => {
  const seed = new Uint8Array([1, 2, 3]);
  const first: JsonObject = { ...DEPLOYMENT, metadata: {} };
  assignName(first, { resourceName: 'web', randomSeed: seed, autonaming: undefined, oldInputs: {} });
  assignNamespace(first, 'models');
  const name = (first.metadata as JsonObject).name as string;
  t.regex(name, /^web-[0-9a-f]{8}$/);
  t.deepEqual(first.metadata, { name, namespace: 'models', annotations: { 'pulumi.com/autonamed': 'true' } });
  const again: JsonObject = { ...DEPLOYMENT, metadata: {} };
  assignName(again, { resourceName: 'web', randomSeed: seed, autonaming: undefined, oldInputs: {} });
  t.is((again.metadata as JsonObject).name, name);
  const later: JsonObject = { ...DEPLOYMENT };
  assignName(later, { resourceName: 'web', randomSeed: new Uint8Array([9]), autonaming: undefined, oldInputs: first });
  t.is((later.metadata as JsonObject).name, name);
  const named: JsonObject = { ...DEPLOYMENT, metadata: { name: 'fixed' } };
  assignName(named, { resourceName: 'web', randomSeed: seed, autonaming: undefined, oldInputs: {} });
  t.deepEqual(named.metadata, { name: 'fixed' });
  t.throws(() => assignName({ metadata: {} }, { resourceName: 'x', randomSeed: seed, autonaming: { mode: 'disable', proposedName: '' }, oldInputs: {} }), { message: /autonaming is disabled/ });
});

const kubeconfigFor = (server: string, token = 't', namespace?: string) => JSON.stringify({
  apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
  contexts: [{ name: 'c', context: { cluster: 'k', user: 'u', ...(namespace ? { namespace } : {}) } }],
  clusters: [{ name: 'k', cluster: { server, 'certificate-authority-data': Buffer.from('ca').toString('base64') } }],
  users: [{ name: 'u', user: { token } }],
});

test('provider configuration: a kubeconfig as text or a path, its namespace, the provider switches', async (t) => {
  const fromText = readProviderConfig(configVariables([['kubernetes:config:kubeconfig', kubeconfigFor('https://a:6443', 't', 'team')]]), {});
  t.truthy(fromText.api);
  t.is(fromText.defaultNamespace, 'team');
  t.false(fromText.upsertExistingObjects);
  const file = join(await mkdtemp(join(tmpdir(), 'kiln-kubeconfig-')), 'config');
  await writeFile(file, kubeconfigFor('https://a:6443'));
  const fromPath = readProviderConfig(configVariables([
    ['kubernetes:config:kubeconfig', file], ['kubernetes:config:namespace', 'models'], ['kubernetes:config:upsertExistingObjects', 'true'],
  ]), {});
  t.truthy(fromPath.api);
  t.is(fromPath.defaultNamespace, 'models');
  t.true(fromPath.upsertExistingObjects);
  const fromEnv = readProviderConfig(new Map(), { KUBECONFIG: `/nonexistent:${file}`, HOME: '/nonexistent' });
  t.truthy(fromEnv.api);
  t.is(fromEnv.defaultNamespace, 'default');
  const unknown = readProviderConfig(configVariables([['kubernetes:config:kubeconfig', UNKNOWN]]), {});
  t.is(unknown.api, undefined);
  t.regex(readProviderConfig(configVariables([['kubernetes:config:kubeconfig', 'not: [a kubeconfig']]), {}).unreachableReason ?? '', /kubeconfig/);
});

test('a new kubeconfig replaces the provider only when it points at another cluster', (t) => {
  t.deepEqual(diffConfig({ kubeconfig: kubeconfigFor('https://a:6443', 'old') }, { kubeconfig: secret(kubeconfigFor('https://a:6443', 'new')) }), { changed: ['kubeconfig'], replaces: [] });
  t.deepEqual(diffConfig({ kubeconfig: kubeconfigFor('https://a:6443') }, { kubeconfig: kubeconfigFor('https://b:6443') }), { changed: ['kubeconfig'], replaces: ['kubeconfig'] });
  t.deepEqual(diffConfig({ kubeconfig: kubeconfigFor('https://a:6443') }, { kubeconfig: UNKNOWN }), { changed: ['kubeconfig'], replaces: ['kubeconfig'] });
  t.deepEqual(diffConfig({ namespace: 'a' }, { namespace: 'a' }), { changed: [], replaces: [] });
});

test('state keeps secret inputs secret in the outputs, and a Secret\'s data always', (t) => {
  const inputs: JsonObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { password: secret('p'), user: 'u' } };
  const state = checkpoint({ live: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', uid: '1' }, data: { password: 'p', user: 'u' } }, inputs, fieldManager: 'm', initialApiVersion: 'v1' });
  t.deepEqual(state.data, { password: secret('p'), user: 'u' });
  t.deepEqual(state.__inputs, inputs);
  t.is(state.__fieldManager, 'm');
  const secretState = checkpoint({ live: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'dg==' } }, inputs: { apiVersion: 'v1', kind: 'Secret', stringData: { k: 'v' } }, fieldManager: 'm', initialApiVersion: 'v1' });
  t.deepEqual(secretState.data, secret({ k: 'dg==' }));
  t.deepEqual((secretState.__inputs as JsonObject).stringData, secret({ k: 'v' }));
});

test('a Secret\'s stringData compares with the data the API server made of it', (t) => {
  const inputs: JsonObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, stringData: { token: 'abc' } };
  const { stringData: _stringData, ...rest } = inputs;
  const stored: JsonObject = { ...rest, data: { token: Buffer.from('abc').toString('base64') }, type: 'Opaque' };
  const paths = replaceOnChangePaths({ apiVersion: 'v1', kind: 'Secret' }, false, options);
  t.false(diffObject({ oldInputs: inputs, oldLive: stored, newInputs: inputs, namespaced: true, replacePaths: paths, ignoreChanges: [] }).changed);
  const changed = diffObject({ oldInputs: inputs, oldLive: stored, newInputs: { ...inputs, stringData: { token: 'xyz' } }, namespaced: true, replacePaths: paths, ignoreChanges: [] });
  t.deepEqual(changed.replaces, ['data.token']);
});
