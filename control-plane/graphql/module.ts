// GraphQL: one schema over the areas' own services, served at POST /v1/graphql. It keeps no table.
import { defineModule } from '../module.ts';
import { graphqlRoutes } from './routes.ts';

export const graphqlModule = defineModule({
  name: 'graphql',
  routes: ({ services, log, routes }) => graphqlRoutes({
    services: {
      deployments: services.deployments,
      models: services.models,
      templates: services.templates,
      apiKeys: services.apiKeys,
      costs: services.costs,
      monitoring: services.monitoring,
      team: services.team,
      billing: services.billing,
    },
    audit: services.audit,
    routes,
    log,
  }),
});
