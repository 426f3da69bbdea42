// Pool growth on an `aws` cluster: the decision that adds Node objects to a local pool raises an EKS node group's
// desired size instead. The API's database holds the cluster (an aws record, as POST /v1/admin/clusters makes
// one) and a deployment placed on it; growth commits the node group's new size and signals the cluster's workflow
// (the test run's real Temporal, a workflow no worker runs, whose history keeps the signal); the gpu-cluster
// program, run under Pulumi's mocks (the AWS provider plugin cannot be had here), builds the node group at that size.
import { randomUUID } from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { defaultPayloadConverter } from '@temporalio/common';
import { GpuClusterSchema } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import { CLUSTER_WORKFLOW, type DesiredAwsCluster } from '../../workflows/contract/cluster.ts';
import { poolGrowth } from '../../workflows/cluster/pool-growth.ts';
import { signup, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';
import { awsState, mockPulumi } from '../stacks/mocks.ts';

const mocks = await mockPulumi(awsState);
const { clusterProgram } = await import('../../workflows/cluster/program.ts');

const test = anyTest as TestFn<{ api: TestApi }>;
test.before(async (t) => {
  t.context = { api: await startTestApi(import.meta.filename) };
});
test.after.always(async (t) => {
  await t.context.api?.close();
});

const L4_GROUP = { gpuType: 'nvidia-l4', minSize: 1, desiredSize: 2, maxSize: 4 };
const H100_GROUP = { gpuType: 'nvidia-h100-80gb', minSize: 0, desiredSize: 1, maxSize: 2 };

test('an aws cluster\'s EKS node group grows for replicas that cannot be placed, to its maximum and no further', async (t) => {
  const { api } = t.context;
  const clusterId = `clu_aws${randomUUID().replaceAll('-', '').slice(0, 13)}`;
  const spec = { region: 'us-east-1', subnetIds: ['subnet-a', 'subnet-b'], nodeGroups: [H100_GROUP, L4_GROUP] };
  await api.orm.em.fork().insert(GpuClusterSchema, {
    id: clusterId, name: 'eks', provider: 'aws', status: 'ready', gpus: [{ gpuType: 'nvidia-l4', count: 2 }], spec, generation: 1, sentGeneration: 1, createdAt: new Date(), updatedAt: new Date(),
  });
  const user = await signup(api);
  const created = await api.request('POST', '/v1/deployments', { token: user.token, body: { ...validDeployment('wide'), gpu: 'nvidia-l4', replicas: 4 } });
  t.is(created.status, 201);
  await api.pool.query('UPDATE deployment SET cluster_id = $1 WHERE id = $2', [clusterId, created.body.id]);
  // The cluster's workflow, on a queue nobody polls: it only keeps what it is sent.
  const handle = await api.workflows.workflow.start(CLUSTER_WORKFLOW, {
    workflowId: clusterId, taskQueue: `nobody-${randomUUID()}`, args: [{ clusterId, name: 'eks', desired: { generation: 1, deleted: false, provider: 'aws', ...spec } }],
  });
  t.teardown(() => handle.terminate().catch(() => undefined));
  const growth = poolGrowth(api.orm, api.workflows);
  const request = { deploymentId: created.body.id, gpuType: 'nvidia-l4', missingReplicas: 2, gpusPerReplica: 1 };

  t.deepEqual(await growth.grow({ ...request, requestId: 'run/1' }), { adding: true, reason: 'adding 2 nvidia-l4 nodes to node group nvidia-l4' });
  t.deepEqual(await growth.grow({ ...request, requestId: 'run/1' }), { adding: true, reason: 'adding 2 nvidia-l4 nodes to node group nvidia-l4' }, 'a retried request grows nothing more');
  const cluster = await api.orm.em.fork().findOneOrFail(GpuClusterSchema, { id: clusterId });
  t.like(cluster, { status: 'scaling', generation: 2 });
  t.deepEqual((cluster.spec as DesiredAwsCluster).nodeGroups, [H100_GROUP, { ...L4_GROUP, desiredSize: 4 }]);
  t.true(await growth.scaling(clusterId));
  t.deepEqual(await growth.grow({ ...request, requestId: 'run/2' }), { adding: false, reason: 'node group nvidia-l4 is at its maximum of 4 nodes' });

  // What the workflow was sent: generation 2 with the new size (the retried request sent it again, which the workflow
  // ignores as a repeat), and the gpu-cluster program gives the EKS node group that size.
  const signals = ((await handle.fetchHistory()).events ?? []).flatMap((e) => e.workflowExecutionSignaledEventAttributes ?? [])
    .map((signal) => defaultPayloadConverter.fromPayload<DesiredAwsCluster>(signal.input!.payloads![0]!));
  t.is(signals.length, 2);
  t.deepEqual(signals[1], signals[0]);
  const desired = signals[0]!;
  t.like(desired, { generation: 2, provider: 'aws', deleted: false });
  await clusterProgram({ clusterId, name: 'eks', desired })();
  const nodeGroup = await mocks.resource('aws:eks/nodeGroup:NodeGroup', 'eks-nvidia-l4');
  t.deepEqual(nodeGroup.inputs.scalingConfig, { minSize: 1, desiredSize: 4, maxSize: 4 });
});
