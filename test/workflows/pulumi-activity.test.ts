// How the deployment and cluster activities report a failed Pulumi operation to Temporal (workflows/pulumi/activity.ts),
// against the real Pulumi CLI on a file backend, each activity run in Temporal's mock activity context.
import test from 'ava';
import { ApplicationFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createClusterActivities } from '../../workflows/cluster/activities.ts';
import type { DesiredDeployment } from '../../workflows/contract/deployment.ts';
import { createDeploymentActivities } from '../../workflows/deployment/activities.ts';
import type { PulumiSettings } from '../../workflows/pulumi/automation.ts';
import type { TestProgramInput } from './fixtures/test-program.ts';
import { testPulumiSettings } from '../support/pulumi.ts';

/** The one cluster these tests' deployments run on (its kubeconfig is not read by the test programs). */
const testCluster = { clusterId: 'clu_test', provider: 'kubernetes', kubeconfig: '' };

const settings = (): Promise<PulumiSettings> => testPulumiSettings('kiln-activity');

const program = (input: Partial<TestProgramInput>) => ({
  programModule: new URL('./fixtures/test-program.ts', import.meta.url).href,
  programExport: 'testProgram',
  programInput: { name: 'llama', replicas: 1, model: 'meta-llama/Llama-3.1-8B-Instruct', ...input } satisfies TestProgramInput,
});

function deploymentActivities(pulumi: PulumiSettings, input: Partial<TestProgramInput>) {
  const failures: string[] = [];
  const activities = createDeploymentActivities({
    pulumi,
    programFor: () => program(input),
    clusters: { accessFor: async () => testCluster, accessToCluster: async () => testCluster },
    namespaces: { ensure: async () => {} },
    circuits: { acquire: async () => undefined, recordSuccess: async () => {}, recordFailure: async (_, reason) => { failures.push(reason); } },
    statuses: { record: async () => {} },
    readiness: { probe: async () => ({ readyReplicas: 1 }), replaceLost: async () => [] },
    load: { measure: async () => ({ inFlight: 0, recentRequests: 0 }) }, // not what these tests look at
  });
  return { activities, failures };
}

const desired: DesiredDeployment = {
  generation: 1, model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4', replicas: 1, minReplicas: 1, maxReplicas: 1,
  running: true, restarts: 0, refreshes: 0, deleted: false, forceDelete: false,
};
/** The failures under test are expected: the mock activity context need not log them. */
const activityEnv = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
const missingPlugin = { instanceOf: ApplicationFailure, message: /no resource plugin 'pulumi-resource-kilnnowhere'/ };

test('a deployment whose provider plugin is missing fails for good: one failed attempt counts against its circuit, not four', async (t) => {
  const { activities, failures } = deploymentActivities(await settings(), { missingPlugin: true });
  const target = { deploymentId: 'dep_noplugin', organizationId: 'org_test', name: 'llama', desired };
  const error = await t.throwsAsync(activityEnv().run(activities.applyStack, target), missingPlugin);
  t.like(error, { type: 'PluginMissing', nonRetryable: true });
  t.is(failures.length, 1);
  t.regex(failures[0]!, /no resource plugin/);
});

test('a cluster whose provider plugin is missing fails for good, as a deployment does', async (t) => {
  const activities = createClusterActivities({
    pulumi: await settings(),
    programFor: () => program({ missingPlugin: true }),
    localProgramFor: () => program({ missingPlugin: true }),
    check: () => {},
    gpusPerNode: () => 1,
    poolsReady: async () => true,
    store: { record: async () => {}, recordOutputs: async () => {}, kubeconfig: async () => '' },
  });
  const target = { clusterId: 'clu_noplugin', name: 'gpu-east', desired: { generation: 1, region: 'us-east-1', subnetIds: [], nodeGroups: [], deleted: false } };
  const error = await t.throwsAsync(activityEnv().run(activities.applyClusterStack, target), missingPlugin);
  t.like(error, { type: 'PluginMissing', nonRetryable: true });
});

test('other Pulumi failures stay retryable', async (t) => {
  const { activities, failures } = deploymentActivities(await settings(), { failWith: 'the API server did not answer' });
  const target = { deploymentId: 'dep_flaky', organizationId: 'org_test', name: 'llama', desired };
  const error = await t.throwsAsync(activityEnv().run(activities.applyStack, target), { message: /the API server did not answer/ });
  t.false(error instanceof ApplicationFailure && error.nonRetryable);
  t.is(failures.length, 1);
});
