// Organizations and memberships: who belongs where, with which role.
import { defineModule } from '../module.ts';
import { createOrganizationService, type OrganizationService } from './service.ts';

declare module '../module.ts' {
  interface Services { organizations: OrganizationService }
}

export const organizationsModule = defineModule({
  name: 'organizations',
  services: ({ config }) => ({ organizations: createOrganizationService({ adminEmails: config.adminEmails }) }),
});
