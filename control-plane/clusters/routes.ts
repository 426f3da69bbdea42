// /v1/admin/clusters: the GPU clusters deployments run on. Platform administration (admin:read and
// admin:write): clusters are shared by every organization. Not in the spec; see docs/concepts/clusters.md.
import { z } from 'zod';
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import type { ClusterEventService } from './events.ts';
import type { ClusterService } from './service.ts';
import { ClusterEventView, ClusterIdParams, ClusterView, CreateClusterRequest, ListClusterEventsQuery, UpdateClusterRequest } from './schemas.ts';

const common = { tag: 'Admin', resourceType: 'gpu_cluster' } as const;

export function clusterRoutes(clusters: ClusterService, events: ClusterEventService): Route[] {
  return [
    defineRoute({
      ...common, permission: 'admin:read', method: 'GET', path: '/v1/admin/clusters', operationId: 'listClusters', summary: 'List GPU clusters with the GPUs each offers and how many of them its deployments hold',
      response: z.array(ClusterView),
      handle: async ({ state }) => ({ data: await clusters.list(state.em) }),
    }),
    defineRoute({
      ...common, permission: 'admin:write', method: 'POST', path: '/v1/admin/clusters', operationId: 'createCluster',
      summary: 'Register an existing cluster by kubeconfig (kubernetes), or have Kiln provision an EKS cluster (aws)',
      body: CreateClusterRequest, response: ClusterView, successStatus: 201, errors: [409, 422],
      idempotent: { creates: 'GpuCluster', replay: (id, state) => clusters.get(state.em, id) },
      handle: async ({ body, state }) => ({ data: await clusters.create(state.em, body) }),
    }),
    defineRoute({
      ...common, permission: 'admin:read', method: 'GET', path: '/v1/admin/clusters/{id}', operationId: 'getCluster', summary: 'Read a GPU cluster',
      params: ClusterIdParams, response: ClusterView, errors: [404],
      handle: async ({ params, state }) => ({ data: await clusters.get(state.em, params.id) }),
    }),
    defineRoute({
      ...common, permission: 'admin:read', method: 'GET', path: '/v1/admin/clusters/{id}/events', operationId: 'listClusterEvents',
      summary: 'A cluster\'s capacity decisions, newest first: node pools grown for deployments, and shrunk after idle time',
      params: ClusterIdParams, query: ListClusterEventsQuery, response: ClusterEventView.array(), list: true, errors: [404],
      handle: async ({ params, query, state }) => pageReply(await events.list(state.em, params.id, query)),
    }),
    defineRoute({
      ...common, permission: 'admin:write', method: 'PATCH', path: '/v1/admin/clusters/{id}', operationId: 'updateCluster',
      summary: 'Rename; a new kubeconfig (GPUs read again); new node group sizes (the stack is scaled)',
      params: ClusterIdParams, body: UpdateClusterRequest, response: ClusterView, errors: [404, 409, 422],
      async handle({ params, body, state }) {
        state.resourceId = params.id;
        return { data: await clusters.update(state.em, params.id, body) };
      },
    }),
    defineRoute({
      ...common, permission: 'admin:write', method: 'DELETE', path: '/v1/admin/clusters/{id}', operationId: 'deleteCluster',
      summary: 'Forget a registered cluster, or tear down a provisioned one; refused while deployments run on it',
      params: ClusterIdParams, response: ClusterView, errors: [404, 409],
      async handle({ params, state }) {
        state.resourceId = params.id;
        return { data: await clusters.remove(state.em, params.id) };
      },
    }),
  ];
}
