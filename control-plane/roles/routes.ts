// /v1/enterprise/roles (built-in roles listed read-only, custom roles managed) and
// /v1/enterprise/assignments (which role each member holds).
import { z } from 'zod';
import { defineRoute, type Route } from '../http/routes.ts';
import { queryOrBodyField } from '../http/validate.ts';
import type { RoleService } from './service.ts';
import {
  AssignmentView, AssignRoleRequest, DeletedRole, ListAssignmentsQuery, ListRolesQuery, RemoveAssignmentQuery, RemoveAssignmentRequest, RemovedAssignment, RoleIdParams, RoleRequest, RoleView,
} from './schemas.ts';

const role = { tag: 'Enterprise', resourceType: 'role' } as const;
const assignment = { tag: 'Enterprise', resourceType: 'role_assignment', path: '/v1/enterprise/assignments' } as const;

export function roleRoutes(roles: RoleService): Route[] {
  return [
    defineRoute({
      ...role, permission: 'roles:read', method: 'GET', path: '/v1/enterprise/roles', operationId: 'listRoles', summary: 'List the built-in roles and the organization\'s custom roles, with their permissions',
      query: ListRolesQuery, response: z.array(RoleView),
      handle: async ({ state }) => ({ data: await roles.list(state.em, state.principal!) }),
    }),
    defineRoute({
      ...role, permission: 'roles:write', method: 'POST', path: '/v1/enterprise/roles', operationId: 'createRole', summary: 'Create a custom role: a named set of permissions',
      body: RoleRequest, response: RoleView, successStatus: 201, idempotent: true, errors: [409, 422],
      handle: async ({ body, state }) => ({ data: await roles.create(state.em, state.principal!, body) }),
    }),
    defineRoute({
      ...role, permission: 'roles:write', method: 'PUT', path: '/v1/enterprise/roles/{id}', operationId: 'replaceRole', summary: 'Replace a custom role\'s name, description and permissions (built-in roles are read-only)',
      params: RoleIdParams, body: RoleRequest, response: RoleView, errors: [404, 409, 422],
      handle: async ({ params, body, state }) => ({ data: await roles.update(state.em, state.principal!, params.id, body) }),
    }),
    defineRoute({
      ...role, permission: 'roles:write', method: 'DELETE', path: '/v1/enterprise/roles/{id}', operationId: 'deleteRole', summary: 'Delete a custom role no member holds',
      params: RoleIdParams, response: DeletedRole, errors: [404, 409, 422],
      handle: async ({ params, state }) => ({ data: await roles.remove(state.em, state.principal!, params.id) }),
    }),
    defineRoute({
      ...assignment, permission: 'roles:read', method: 'GET', operationId: 'listRoleAssignments', summary: 'The role each member of the organization holds',
      query: ListAssignmentsQuery, response: z.array(AssignmentView), errors: [404],
      handle: async ({ query, state }) => ({ data: await roles.assignments(state.em, state.principal!, query) }),
    }),
    defineRoute({
      ...assignment, permission: 'roles:write', method: 'POST', operationId: 'assignRole', summary: 'Give a member a built-in or custom role in place of the one they hold',
      body: AssignRoleRequest, response: AssignmentView, errors: [404, 422],
      async handle({ body, state }) {
        state.resourceId = body.userId;
        return { data: await roles.assign(state.em, state.principal!, body) };
      },
    }),
    defineRoute({
      ...assignment, permission: 'roles:write', method: 'DELETE', operationId: 'removeRoleAssignment', summary: 'Take a member\'s role away, and with it their membership',
      query: RemoveAssignmentQuery, body: RemoveAssignmentRequest, optionalBody: true, response: RemovedAssignment, errors: [404, 422],
      async handle({ query, body, state }) {
        const userId = queryOrBodyField('userId', query.userId, body.userId);
        state.resourceId = userId;
        return { data: await roles.unassign(state.em, state.principal!, userId) };
      },
    }),
  ];
}
