// /v1/settings/profile and /v1/settings/organization: read and update. The plan is shown, not changed here.
import { defineRoute, type Route } from '../http/routes.ts';
import {
  OrganizationView, ProfileView, SettingsQuery, UpdateOrganizationRequest, UpdateProfileRequest, VerifyEmailRequest,
} from './schemas.ts';
import type { SettingsService } from './service.ts';

const profile = { tag: 'Settings', resourceType: 'user' } as const;
const organization = { tag: 'Settings', resourceType: 'organization' } as const;

export function settingsRoutes(settings: SettingsService): Route[] {
  return [
    defineRoute({
      ...profile, permission: 'profile:read', method: 'GET', path: '/v1/settings/profile', operationId: 'getProfile', summary: 'Your name and e-mail address (and a pending new one)',
      query: SettingsQuery, response: ProfileView,
      handle: async ({ state }) => ({ data: await settings.getProfile(state.em, state.principal!) }),
    }),
    defineRoute({
      ...profile, permission: 'profile:write', method: 'POST', path: '/v1/settings/profile', operationId: 'updateProfile',
      summary: 'Change your name or e-mail address (a new address is pending until confirmed through the token mailed to it)',
      body: UpdateProfileRequest, response: ProfileView, errors: [409, 422, 503],
      async handle({ body, state }) {
        state.resourceId = state.principal!.userId;
        return { data: await settings.updateProfile(state.em, state.principal!, body) };
      },
    }),
    defineRoute({
      ...profile, permission: 'profile:write', method: 'POST', path: '/v1/settings/profile/verify-email', operationId: 'verifyEmail',
      summary: 'Confirm a new e-mail address with the token mailed to it (signed in as the same user)',
      body: VerifyEmailRequest, response: ProfileView, errors: [404, 409, 422],
      async handle({ body, state }) {
        state.resourceId = state.principal!.userId;
        return { data: await settings.verifyEmail(state.em, state.principal!, body.token) };
      },
    }),
    defineRoute({
      ...organization, permission: 'organization:read', method: 'GET', path: '/v1/settings/organization', operationId: 'getOrganization',
      summary: 'The organization\'s name, slug, contact, default region and plan',
      query: SettingsQuery, response: OrganizationView,
      handle: async ({ state }) => ({ data: await settings.getOrganization(state.em, state.principal!) }),
    }),
    defineRoute({
      ...organization, permission: 'organization:write', method: 'POST', path: '/v1/settings/organization', operationId: 'updateOrganization',
      summary: 'Change the organization\'s name, slug, contact e-mail, default region or whether unverified models are allowed (the plan is read-only)',
      body: UpdateOrganizationRequest, response: OrganizationView, errors: [409, 422],
      async handle({ body, state }) {
        state.resourceId = state.principal!.organizationId;
        return { data: await settings.updateOrganization(state.em, state.principal!, body) };
      },
    }),
  ];
}
