// GraphQL: one schema over the areas' own services, served at POST /v1/graphql. It keeps no table; team and
// billing build their services inside their modules, so this one builds the same services from the same deps.
import { createBillingService } from '../billing/service.ts';
import { defineModule } from '../module.ts';
import { createTeamService } from '../team/service.ts';
import { graphqlRoutes } from './routes.ts';

export const graphqlModule = defineModule({
  name: 'graphql',
  routes: ({ services, mail, cursors, log, routes }) => graphqlRoutes({
    services: {
      deployments: services.deployments,
      models: services.models,
      templates: services.templates,
      apiKeys: services.apiKeys,
      costs: services.costs,
      monitoring: services.monitoring,
      team: createTeamService({ ...mail, auth: services.auth }),
      billing: createBillingService({ cursors }),
    },
    audit: services.audit,
    routes,
    log,
  }),
});
