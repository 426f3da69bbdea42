// The deployment program under Pulumi's mocks: what one deployment's stack declares, running and stopped.
import test from 'ava';
import type { Output } from '@pulumi/pulumi';
import { GPU_RESOURCE, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { namespaceOf, type DesiredDeployment } from '../../workflows/contract/deployment.ts';
import { mockPulumi, valueOf } from '../stacks/mocks.ts';

const mocks = await mockPulumi();
const { deploymentProgram } = await import('../../workflows/deployment/program.ts');

const desired: DesiredDeployment = {
  generation: 1, model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4', replicas: 2, minReplicas: 1, maxReplicas: 4,
  running: true, restarts: 0, refreshes: 0, deleted: false, forceDelete: false,
};
const KUBECONFIG = 'apiVersion: v1\nkind: Config\n';

test('organization ids become valid namespace names', (t) => {
  t.is(namespaceOf('org_2bXk9QzLm'), 'kiln-org-2bxk9qzlm');
});

test('a running deployment is a vLLM component on the cluster, in its organization namespace, which the stack does not own', async (t) => {
  const outputs = await deploymentProgram({ target: { deploymentId: 'dep_1', organizationId: 'org_A1', name: 'llama', desired }, cluster: { kubeconfig: KUBECONFIG } })();
  const provider = await mocks.resource('pulumi:providers:kubernetes', 'cluster');
  t.is(provider.inputs.kubeconfig, KUBECONFIG);

  const deployment = (await mocks.resource('kubernetes:apps/v1:Deployment', 'llama-deployment')).inputs;
  t.is(deployment.metadata.namespace, 'kiln-org-a1');
  t.is(deployment.spec.replicas, 2);
  const pod = deployment.spec.template.spec;
  t.deepEqual(pod.nodeSelector, { [GPU_TYPE_LABEL]: 'nvidia-l4' });
  t.is(pod.containers[0].resources.limits[GPU_RESOURCE], '1');
  // Kiln scales through the workflow: no autoscaler competes for `replicas`, and the namespace is the worker's.
  t.deepEqual(mocks.ofType('kubernetes:autoscaling/v2:HorizontalPodAutoscaler'), []);
  t.deepEqual(mocks.ofType('kubernetes:core/v1:Namespace'), []);
  t.is(await valueOf((outputs as { serviceUrl: Output<string> }).serviceUrl), 'http://llama.kiln-org-a1.svc.cluster.local');
});

test('a restart changes only the pod template annotation that counts restarts', async (t) => {
  await deploymentProgram({ target: { deploymentId: 'dep_3', organizationId: 'org_C3', name: 'qwen', desired: { ...desired, restarts: 2 } }, cluster: { kubeconfig: KUBECONFIG } })();
  const template = (await mocks.resource('kubernetes:apps/v1:Deployment', 'qwen-deployment')).inputs.spec.template;
  t.deepEqual(template.metadata.annotations, { 'kiln.dev/restarts': '2' });
});

test('a stopped deployment declares nothing but keeps its Service URL', async (t) => {
  const outputs = await deploymentProgram({
    target: { deploymentId: 'dep_2', organizationId: 'org_B2', name: 'mistral', desired: { ...desired, running: false } },
    cluster: { kubeconfig: KUBECONFIG },
  })();
  t.deepEqual(outputs, { serviceUrl: 'http://mistral.kiln-org-b2.svc.cluster.local' });
  t.is(mocks.ofType('kubernetes:apps/v1:Deployment').filter((r) => r.name === 'mistral-deployment').length, 0);
});
