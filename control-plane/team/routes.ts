// /v1/team: members and their roles (changed through /v1/enterprise/assignments), invitations (invite, list, change or resend, revoke), and the
// invitee's side by token (look up, accept, decline), which needs no Kiln credential: the mailed token is one.
import { z } from 'zod';
import { defineRoute, type Route } from '../http/routes.ts';
import { LoginSession } from '../auth/schemas.ts';
import {
  AcceptInvitationRequest, DeclinedInvitation, DeclineInvitationRequest, InvitationIdParams, InvitationPreview, InvitationTokenParams,
  InvitationView, InviteRequest, MemberView, UpdateInvitationRequest,
} from './schemas.ts';
import type { TeamService } from './service.ts';

const members = { tag: 'Team', resourceType: 'membership' } as const;
const invitations = { tag: 'Team', resourceType: 'invitation' } as const;

export function teamRoutes(team: TeamService): Route[] {
  return [
    defineRoute({
      ...members, permission: 'team:read', method: 'GET', path: '/v1/team/members', operationId: 'listMembers', summary: 'Members of the organization with their roles',
      response: z.array(MemberView),
      handle: async ({ state }) => ({ data: await team.members(state.em, state.principal!) }),
    }),
    defineRoute({
      ...invitations, permission: 'team:write', method: 'POST', path: '/v1/team/invite', operationId: 'inviteMember',
      summary: 'Invite someone by e-mail with a role (the token is mailed, valid 7 days)',
      body: InviteRequest, response: InvitationView, successStatus: 201, idempotent: true, errors: [409, 422, 503],
      handle: async ({ body, state }) => ({ data: await team.invite(state.em, state.principal!, body) }),
    }),
    defineRoute({
      ...invitations, permission: 'team:read', method: 'GET', path: '/v1/team/invitations', operationId: 'listInvitations', summary: 'Invitations of the organization, newest first',
      response: z.array(InvitationView),
      handle: async ({ state }) => ({ data: await team.invitations(state.em, state.principal!) }),
    }),
    defineRoute({
      ...invitations, permission: 'team:write', method: 'POST', path: '/v1/team/invitations/{id}', operationId: 'updateInvitation',
      summary: 'Change the role of an unanswered invitation, or resend it with a new token',
      params: InvitationIdParams, body: UpdateInvitationRequest, response: InvitationView, errors: [404, 422, 503],
      handle: async ({ params, body, state }) => ({ data: await team.updateInvitation(state.em, state.principal!, params.id, body) }),
    }),
    defineRoute({
      ...invitations, permission: 'team:write', method: 'DELETE', path: '/v1/team/invitations/{id}', operationId: 'revokeInvitation', summary: 'Revoke an unanswered invitation',
      params: InvitationIdParams, response: InvitationView, errors: [404, 422],
      handle: async ({ params, state }) => ({ data: await team.revokeInvitation(state.em, state.principal!, params.id) }),
    }),
    // The invitee's side: the mailed token is the credential.
    defineRoute({
      ...invitations, permission: 'public', method: 'GET', path: '/v1/team/invite/{token}', operationId: 'previewInvitation',
      summary: 'What the invitee sees: organization, role, inviter (no credential: the token is one)',
      params: InvitationTokenParams, response: InvitationPreview, errors: [404, 422],
      handle: async ({ params, state }) => ({ data: await team.preview(state.em, params.token) }),
    }),
    defineRoute({
      ...invitations, permission: 'public', method: 'POST', path: '/v1/team/invite/{token}/accept', operationId: 'acceptInvitation',
      summary: 'Accept: sign in ({password}) or sign up ({name, password}), join, and get a login session',
      params: InvitationTokenParams, body: AcceptInvitationRequest, response: LoginSession, errors: [404, 409, 422, 429],
      handle: async ({ params, body, state }) => ({ data: await team.accept(state.em, params.token, body) }),
    }),
    defineRoute({
      ...invitations, permission: 'public', method: 'POST', path: '/v1/team/invite/{token}/decline', operationId: 'declineInvitation', summary: 'Decline an invitation',
      params: InvitationTokenParams, body: DeclineInvitationRequest, optionalBody: true, response: DeclinedInvitation, errors: [404, 422],
      handle: async ({ params, state }) => ({ data: await team.decline(state.em, params.token) }),
    }),
  ];
}
