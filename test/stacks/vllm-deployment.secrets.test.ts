// The vLLM stack's secret variables: a Kubernetes Secret in the deployment's namespace holds them (its data a
// Pulumi secret, so the stack's state keeps it encrypted), and the container reads each by secretKeyRef; the
// other objects stay free of the values.
import test from 'ava';
import * as pulumi from '@pulumi/pulumi';
import { mockPulumi, valueOf } from './mocks.ts';

const mocks = await mockPulumi();
const { VllmDeployment, StackArgsError } = await import('../../stacks/vllm-deployment/index.ts');

const TOKEN = 'hf_stackTestToken0000Zq9X';
const ARGS = { name: 'gated', namespace: 'kiln-org-1', model: 'meta-llama/Llama-3.1-8B-Instruct', gpuType: 'nvidia-l4', gpusPerReplica: 1, replicas: 1 };
const gated = new VllmDeployment('gated', { ...ARGS, secretEnv: { HF_TOKEN: pulumi.secret(TOKEN) } });
const plain = new VllmDeployment('plain', { ...ARGS, name: 'plain' });

/** How the engine receives a secret value (Pulumi's wire form): the signature marks it, and the state stores it encrypted. */
const SECRET_SIGNATURE = { '4dabf18193072939515e22adb298388d': '1b47061264138c4ac30d75fd1eb44270' };

test('a Secret named after the deployment in its namespace holds the values, sent to the engine as a secret', async (t) => {
  const secret = await mocks.resource('kubernetes:core/v1:Secret', 'gated-secrets');
  t.like(secret.inputs, { metadata: { name: 'gated-secrets', namespace: 'kiln-org-1' }, type: 'Opaque' });
  t.deepEqual(secret.inputs.stringData, { ...SECRET_SIGNATURE, value: { HF_TOKEN: TOKEN } });
});

test('the Secret\'s data is a Pulumi secret; the Deployment and its outputs are not secret', async (t) => {
  t.true(await pulumi.isSecret(gated.secret!.stringData));
  t.false(await pulumi.isSecret(gated.deploymentName));
  t.false(await pulumi.isSecret(gated.serviceUrl));
  t.is(await valueOf(gated.serviceUrl), 'http://gated.kiln-org-1.svc.cluster.local');
});

test('the container reads each variable from the Secret by secretKeyRef, never as a literal value', async (t) => {
  const deployment = (await mocks.resource('kubernetes:apps/v1:Deployment', 'gated-deployment')).inputs;
  const container = deployment.spec.template.spec.containers[0];
  t.deepEqual(container.env, [{ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 'gated-secrets', key: 'HF_TOKEN' } } }]);
  t.false(JSON.stringify(deployment).includes(TOKEN));
});

test('without secret variables there is no Secret and no env', async (t) => {
  const deployment = (await mocks.resource('kubernetes:apps/v1:Deployment', 'plain-deployment')).inputs;
  t.is(deployment.spec.template.spec.containers[0].env, undefined);
  t.is(plain.secret, undefined);
  t.false(mocks.ofType('kubernetes:core/v1:Secret').some((s) => s.name === 'plain-secrets'));
});

test('a variable name that is no environment variable name fails construction', (t) => {
  t.throws(() => new VllmDeployment('bad', { ...ARGS, name: 'bad', secretEnv: { 'HF-TOKEN': pulumi.secret('x') } }), { instanceOf: StackArgsError, message: /environment variable name/ });
});
