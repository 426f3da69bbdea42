// Deployments: the desired state of a vLLM deployment, per organization. The service is composed of a module per
// job: rules.ts (settling a configuration, creation's checks, the rules a form reads), dry-run.ts, list-query.ts,
// lifecycle.ts (read, create, update, actions, delete: the changes the workflow hears of) and recovery.ts.
import { createDryRun, type DryRunDeps } from './dry-run.ts';
import { createDeploymentLifecycle, type DeploymentLifecycleDeps } from './lifecycle.ts';
import { createDeploymentList, type DeploymentListDeps } from './list-query.ts';
import { createDeploymentRecovery, type DeploymentRecoveryDeps } from './recovery.ts';
import { createCreationChecks, type CreationCheckDeps } from './rules.ts';

export type DeploymentServiceDeps = CreationCheckDeps & DryRunDeps & DeploymentListDeps & DeploymentLifecycleDeps & DeploymentRecoveryDeps;

export function createDeploymentService(deps: DeploymentServiceDeps) {
  const creation = createCreationChecks(deps);
  return {
    rules: creation.rules,
    dryRun: createDryRun(deps, creation),
    list: createDeploymentList(deps),
    /** How a deployment of `model` on `gpu` would be served, settled as creation settles it (with what the models service knows): templates store what they would deploy. */
    serving: creation.settle,
    ...createDeploymentLifecycle(deps, creation),
    ...createDeploymentRecovery(deps),
  };
}

export type DeploymentService = ReturnType<typeof createDeploymentService>;
