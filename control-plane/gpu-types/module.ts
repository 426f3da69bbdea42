// The GPU catalog as offered: the catalog's types with what the clusters have free.
import { defineModule } from '../module.ts';
import { gpuTypeRoutes } from './routes.ts';

export const gpuTypesModule = defineModule({
  name: 'gpu-types',
  routes: ({ services }) => gpuTypeRoutes(services.clusters),
});
