// An organization's members and the invitations that add them.
import { defineModule } from '../module.ts';
import { teamRoutes } from './routes.ts';
import { createTeamService, type TeamService } from './service.ts';

declare module '../module.ts' {
  interface Services { team: TeamService }
}

export const teamModule = defineModule({
  name: 'team',
  services: ({ mail, services }) => ({ team: createTeamService({ ...mail, auth: services.auth }) }),
  routes: ({ services }) => teamRoutes(services.team),
});
