// GET /v1/gpu-types: the GPU catalog (catalog/gpu-types.ts), the only values `gpu` accepts.
import { z } from 'zod';
import { GPU_TYPES } from '../../catalog/gpu-types.ts';
import type { ClusterService } from '../clusters/service.ts';
import { orgIdQuery } from '../core/organization-query.ts';
import { defineRoute, type Route } from '../http/routes.ts';

const GpuTypeView = z.object({
  id: z.string().meta({ example: 'nvidia-l4' }),
  name: z.string(),
  vendor: z.string(),
  memoryGb: z.number(),
  memoryBandwidthGBps: z.number().meta({ description: 'Memory bandwidth, GB/s: what bounds decoding speed.' }),
  hourlyPriceUsd: z.number(),
  available: z.boolean().meta({ description: 'Whether a ready GPU cluster offers this type now.' }),
}).meta({ id: 'GpuType' });

export function gpuTypeRoutes(clusters: Pick<ClusterService, 'offeredGpuTypes'>): Route[] {
  return [defineRoute({
    permission: 'catalog:read', method: 'GET', path: '/v1/gpu-types', operationId: 'listGpuTypes', summary: 'List the GPU types a deployment can use',
    tag: 'Catalog', resourceType: 'gpu_type', query: z.object(orgIdQuery), response: z.array(GpuTypeView),
    async handle({ state }) {
      const offered = await clusters.offeredGpuTypes(state.em, state.principal!.organizationId);
      return { data: GPU_TYPES.map((g) => ({ ...g, available: offered.has(g.id) })) };
    },
  })];
}
