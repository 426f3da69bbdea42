// The deployment program with mounted secrets, under Pulumi's mocks: the opened values reach the stack as
// Pulumi secrets in the organization's namespace, and the pod template names the secrets mounted (ids, never
// values), so mounting another one rolls the pods.
import test from 'ava';
import type { DesiredDeployment } from '../../workflows/contract/deployment.ts';
import { mockPulumi } from '../stacks/mocks.ts';

const mocks = await mockPulumi();
const { deploymentProgram, SECRETS_ANNOTATION } = await import('../../workflows/deployment/program.ts');

const TOKEN = 'hf_programTestToken00001';
const desired: DesiredDeployment = {
  generation: 1, model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4', replicas: 1, minReplicas: 1, maxReplicas: 1,
  running: true, restarts: 0, refreshes: 0, deleted: false, forceDelete: false, secrets: [{ name: 'HF_TOKEN', secretId: 'sec_gated0000000000000001' }],
};

test('mounted secrets become a Secret of Pulumi secret values in the namespace, read by the container', async (t) => {
  await deploymentProgram({
    target: { deploymentId: 'dep_1', organizationId: 'org_A1', name: 'gated', desired }, cluster: { kubeconfig: 'apiVersion: v1\nkind: Config\n' }, secretEnv: { HF_TOKEN: TOKEN },
  })();
  const secret = (await mocks.resource('kubernetes:core/v1:Secret', 'gated-secrets')).inputs;
  t.is(secret.metadata.namespace, 'kiln-org-a1');
  t.deepEqual(secret.stringData.value, { HF_TOKEN: TOKEN });
  t.truthy(secret.stringData['4dabf18193072939515e22adb298388d'], 'sent as a secret');
  const template = (await mocks.resource('kubernetes:apps/v1:Deployment', 'gated-deployment')).inputs.spec.template;
  t.deepEqual(template.metadata.annotations, { 'kiln.dev/restarts': '0', [SECRETS_ANNOTATION]: 'HF_TOKEN=sec_gated0000000000000001' });
  t.deepEqual(template.spec.containers[0].env, [{ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 'gated-secrets', key: 'HF_TOKEN' } } }]);
  t.false(JSON.stringify(template).includes(TOKEN));
});
