// An organization's members and the invitations that add them.
import { defineModule } from '../module.ts';
import { teamRoutes } from './routes.ts';
import { createTeamService } from './service.ts';

export const teamModule = defineModule({
  name: 'team',
  routes: ({ mail, services }) => teamRoutes(createTeamService({ ...mail, auth: services.auth })),
});
