// /v1/recovery: inspect a failed deployment and what its workflow is retrying, retry it (optionally after
// `pulumi refresh`), force its deletion, clear its failure; an organization overview and a bulk retry.
import { z } from 'zod';
import { defineRoute, type Route } from '../http/routes.ts';
import { ConflictError, DeploymentNotFoundError } from '../core/errors.ts';
import type { DeploymentService } from '../deployments/service.ts';
import { DeploymentView } from '../deployments/schemas.ts';
import { GpuClusterSchema, ownClusterOfCircuit } from '../clusters/gpu-cluster.entity.ts';
import { circuitForOrganizations, type CircuitService } from './circuits.ts';
import {
  BulkRetryRequest, CircuitActionRequest, CircuitQuery, CircuitView, BulkRetryResult, DeploymentRecovery, RecoveryActionRequest, RecoveryIdParams, RecoveryOverview, RecoveryOverviewQuery,
} from './schemas.ts';

const common = { tag: 'Recovery', resourceType: 'deployment' } as const;

export function recoveryRoutes(deployments: DeploymentService, circuits: CircuitService): Route[] {
  return [
    defineRoute({
      ...common, permission: 'deployments:read', method: 'GET', path: '/v1/recovery/deployments/{id}', operationId: 'inspectDeploymentRecovery',
      summary: 'A deployment\'s failure, recent events and the attempts its workflow is making (503 at once while Temporal, which it reads, is away)',
      params: RecoveryIdParams, response: DeploymentRecovery, errors: [404, 503],
      handle: async ({ params, state }) => ({ data: await deployments.inspect(state.em, state.principal!, params.id) }),
    }),
    defineRoute({
      ...common, permission: 'deployments:write', method: 'POST', path: '/v1/recovery/deployments/{id}', operationId: 'recoverDeployment',
      summary: 'Retry, refresh and retry, or force-delete a deployment',
      params: RecoveryIdParams, body: RecoveryActionRequest, response: DeploymentView, errors: [404, 409],
      handle: async ({ params, body, state }) => ({ data: await deployments.recover(state.em, state.principal!, params.id, body.action) }),
    }),
    defineRoute({
      ...common, permission: 'deployments:write', method: 'DELETE', path: '/v1/recovery/deployments/{id}', operationId: 'clearDeploymentFailure',
      summary: 'Clear a deployment\'s failure reason', params: RecoveryIdParams, response: DeploymentView, errors: [404],
      handle: async ({ params, state }) => ({ data: await deployments.clearFailure(state.em, state.principal!, params.id) }),
    }),
    defineRoute({
      ...common, permission: 'deployments:read', method: 'GET', path: '/v1/recovery', operationId: 'recoveryOverview', summary: 'The organization\'s failed deployments',
      query: RecoveryOverviewQuery, response: RecoveryOverview,
      handle: async ({ state }) => ({ data: { failed: await deployments.failed(state.em, state.principal!) } }),
    }),
    defineRoute({
      ...common, permission: 'deployments:write', method: 'POST', path: '/v1/recovery', operationId: 'bulkRetry', summary: 'Retry many failed deployments, with a result per deployment',
      body: BulkRetryRequest, response: BulkRetryResult,
      async handle({ body, state }) {
        const ids = body.ids ?? (await deployments.failed(state.em, state.principal!)).map((d) => d.id);
        const results = [];
        for (const id of ids) {
          const outcome = await deployments.recover(state.em, state.principal!, id, body.action).then(() => 'retried' as const, (error: unknown) => {
            if (error instanceof DeploymentNotFoundError) return 'not_found' as const;
            if (error instanceof ConflictError) return 'not_failed' as const;
            throw error;
          });
          results.push({ id, outcome });
        }
        return { data: { results } };
      },
    }),
    defineRoute({
      ...common, permission: 'deployments:read', method: 'GET', path: '/v1/recovery/circuits', operationId: 'listCircuits', resourceType: 'circuit',
      summary: 'Provisioning circuits per provider and GPU type: state, consecutive failures, when opened and when half-open',
      query: CircuitQuery, response: z.array(CircuitView),
      handle: async ({ state }) => {
        const all = await circuits.list(state.em);
        if (state.principal!.platformAdmin) return { data: all };
        // The circuits of an organization's own clusters are its own: another organization sees none of them.
        const own = new Set((await state.em.find(GpuClusterSchema, { organization: state.principal!.organizationId }, { fields: ['id'] })).map((c) => c.id));
        return { data: all.filter((c) => { const cluster = ownClusterOfCircuit(c.provider); return cluster === null || own.has(cluster); }).map(circuitForOrganizations) };
      },
    }),
    // A circuit is shared by every organization on the provider: closing one early is the platform's call.
    defineRoute({
      ...common, permission: 'admin:write', method: 'POST', path: '/v1/recovery/circuits', operationId: 'resetCircuit', resourceType: 'circuit',
      summary: 'Reset a provisioning circuit: closed, its failures forgotten',
      body: CircuitActionRequest, response: CircuitView, errors: [422],
      handle: async ({ body, state }) => ({ data: await circuits.reset(state.em, { provider: body.provider, gpuType: body.gpuType }) }),
    }),
  ];
}
