// GET /v1/gpu-types: the GPU catalog (catalog/gpu-types.ts), the only values `gpu` accepts.
import { z } from 'zod';
import { GPU_TYPES } from '../../catalog/gpu-types.ts';
import { defineRoute, type Route } from '../http/routes.ts';

const GpuTypeView = z.object({
  id: z.string().meta({ example: 'nvidia-l4' }),
  name: z.string(),
  vendor: z.string(),
  memoryGb: z.number(),
  hourlyPriceUsd: z.number(),
  available: z.boolean(),
}).meta({ id: 'GpuType' });

export function gpuTypeRoutes(): Route[] {
  return [defineRoute({
    method: 'GET', path: '/v1/gpu-types', operationId: 'listGpuTypes', summary: 'List the GPU types a deployment can use',
    tag: 'Catalog', resourceType: 'gpu_type', query: z.object({ orgId: z.string().optional() }), response: z.array(GpuTypeView),
    // Every catalog type can be requested; per-cluster capacity arrives with the GPU clusters.
    handle: async () => ({ data: GPU_TYPES.map((g) => ({ ...g, available: true })) }),
  })];
}
