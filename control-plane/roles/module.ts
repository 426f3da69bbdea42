// Custom roles and role assignments.
import { defineModule } from '../module.ts';
import { roleRoutes } from './routes.ts';
import { createRoleService } from './service.ts';

export const rolesModule = defineModule({
  name: 'roles',
  routes: ({ services }) => roleRoutes(createRoleService({ credentials: services.credentials })),
});
