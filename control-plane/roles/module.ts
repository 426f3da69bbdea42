// Custom roles and role assignments.
import { defineModule } from '../module.ts';
import { CustomRoleSchema } from './custom-role.entity.ts';
import { roleRoutes } from './routes.ts';
import { createRoleService } from './service.ts';

export const rolesModule = defineModule({
  name: 'roles',
  entities: [CustomRoleSchema],
  routes: ({ services }) => roleRoutes(createRoleService({ credentials: services.credentials })),
});
