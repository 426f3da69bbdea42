// The readiness probe against the real local GPU cluster: the objects are applied through the Kubernetes API
// exactly as the vllm-deployment stack shapes them (its labels, GPU limits, node selection, toleration).
import test from 'ava';
import { GPU_RESOURCE, GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';
import { kubernetesReadiness } from '../../workflows/deployment/readiness.ts';
import type { Readiness } from '../../workflows/deployment/activities.ts';

let cluster: GpuCluster;
test.before(async () => {
  cluster = await startTestGpuCluster([{ gpuType: 'nvidia-l4', nodes: 2, gpusPerNode: 1 }]);
});
test.after.always(() => cluster?.stop());

async function applyVllmLike(name: string, replicas: number) {
  const labels = { 'app.kubernetes.io/name': 'vllm', 'app.kubernetes.io/instance': name };
  await cluster.api.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, labels },
    spec: {
      replicas, selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { [GPU_TYPE_LABEL]: 'nvidia-l4' },
          tolerations: [{ key: GPU_TAINT.key, operator: 'Exists', effect: GPU_TAINT.effect }],
          containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0', resources: { limits: { [GPU_RESOURCE]: '1' } } }],
        },
      },
    },
  });
}

/** The probe's answer once it satisfies `done`. */
function probeUntil(name: string, done: (r: Readiness) => boolean): Promise<Readiness> {
  const probe = kubernetesReadiness(cluster.api, () => 'default');
  return eventually(`${name} readiness`, async () => {
    const readiness = await probe.probe({ organizationId: 'org_x', name });
    return done(readiness) && readiness;
  });
}

test.serial('counts Ready replicas of a placed deployment', async (t) => {
  await applyVllmLike('small', 1);
  const readiness = await probeUntil('small', (r) => r.readyReplicas === 1);
  t.deepEqual(readiness, { readyReplicas: 1, unschedulableReason: undefined });
  await cluster.api.request('DELETE', '/apis/apps/v1/namespaces/default/deployments/small?propagationPolicy=Foreground');
});

test.serial('during a rolling change the old Ready pods do not count: the new template must be available', async (t) => {
  await applyVllmLike('rolling', 1);
  await probeUntil('rolling', (r) => r.readyReplicas === 1);
  // The new template asks for a GPU type this cluster lacks: its pod stays Pending while the old one runs on.
  await cluster.api.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/rolling', {
    spec: { template: { spec: { nodeSelector: { [GPU_TYPE_LABEL]: 'nvidia-h100-80gb' } } } },
  }, 'application/merge-patch+json');
  const readiness = await probeUntil('rolling', (r) => !!r.unschedulableReason);
  t.is(readiness.readyReplicas, 0);
  const old = await cluster.api.get<{ status: { readyReplicas?: number } }>('/apis/apps/v1/namespaces/default/deployments/rolling');
  t.is(old.status.readyReplicas, 1, 'the old pod is still Ready');
  await cluster.api.request('DELETE', '/apis/apps/v1/namespaces/default/deployments/rolling?propagationPolicy=Foreground');
  await eventually('rolling pods gone', async () => (await cluster.api.get<{ items: unknown[] }>('/api/v1/namespaces/default/pods?labelSelector=app.kubernetes.io%2Finstance%3Drolling')).items.length === 0);
});

test.serial("reports the scheduler's reason when the cluster lacks GPUs", async (t) => {
  await applyVllmLike('big', 3);
  const readiness = await probeUntil('big', (r) => r.readyReplicas === 2 && !!r.unschedulableReason);
  t.is(readiness.readyReplicas, 2);
  t.regex(readiness.unschedulableReason ?? '', /Insufficient nvidia\.com\/gpu/);
});
