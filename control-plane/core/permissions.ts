// The permission table: which permission each route needs, what each API-key scope and each
// organization role grants. Plain data, read by the router (control-plane/http/routes.ts) and by tests;
// a route missing from ROUTE_PERMISSIONS fails start-up, so nothing is reachable by accident.

export const SCOPES = ['full_access', 'deployments_only', 'read_only'] as const;
export type Scope = (typeof SCOPES)[number];

/** The built-in organization roles; an organization may add custom roles (control-plane/roles). */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
/** What a membership holds: a built-in role's name or a custom role's id (`role_...`). */
export type RoleId = Role | `role_${string}`;

export function isBuiltInRole(id: string): id is Role {
  return (ROLES as readonly string[]).includes(id);
}

/** Every permission a route may need. `public` needs no credential; `admin:*` needs a platform administrator. */
export const PERMISSIONS = [
  'deployments:read', 'deployments:write',
  // Calling a deployment's model: using it, not changing it, so a role or key may do one without the other.
  'deployments:infer',
  'catalog:read',
  'api-keys:read', 'api-keys:write',
  'webhooks:read', 'webhooks:write',
  'profile:read', 'profile:write',
  'organization:read', 'organization:write',
  'team:read', 'team:write',
  'roles:read', 'roles:write',
  'audit:read',
  'analytics:read',
  'sso:read', 'sso:write',
  'admin:read', 'admin:write',
] as const;
export type Permission = 'public' | (typeof PERMISSIONS)[number];
/** What an organization role, built-in or custom, may hold: everything but platform administration. */
export type OrganizationPermission = Exclude<(typeof PERMISSIONS)[number], `admin:${string}`>;
export const ORGANIZATION_PERMISSIONS = PERMISSIONS.filter((p): p is OrganizationPermission => !p.startsWith('admin:'));

/** Keys are `<METHOD> <path>` as mounted: `/v1/...` for the reference API, `/api/...` for the platform. */
export const ROUTE_PERMISSIONS: Readonly<Record<string, Permission>> = {
  'GET /v1/health': 'public',
  'GET /v1/openapi': 'public',
  'POST /v1/auth/signup': 'public',
  'POST /v1/auth/signin': 'public',
  'GET /v1/gpu-types': 'catalog:read',
  'GET /v1/deployments': 'deployments:read',
  'POST /v1/deployments': 'deployments:write',
  'GET /v1/settings/api-keys': 'api-keys:read',
  'POST /v1/settings/api-keys': 'api-keys:write',
  'PATCH /v1/settings/api-keys': 'api-keys:write',
  'PUT /v1/settings/api-keys': 'api-keys:write',
  'DELETE /v1/settings/api-keys': 'api-keys:write',
  'GET /v1/settings/profile': 'profile:read',
  'POST /v1/settings/profile': 'profile:write',
  'POST /v1/settings/profile/verify-email': 'profile:write',
  'GET /v1/settings/organization': 'organization:read',
  'POST /v1/settings/organization': 'organization:write',
  'GET /v1/team/members': 'team:read',
  'POST /v1/team/invite': 'team:write',
  'GET /v1/team/invitations': 'team:read',
  'POST /v1/team/invitations/{id}': 'team:write',
  'DELETE /v1/team/invitations/{id}': 'team:write',
  // The invitee's side: the mailed token is the credential.
  'GET /v1/team/invite/{token}': 'public',
  'POST /v1/team/invite/{token}/accept': 'public',
  'POST /v1/team/invite/{token}/decline': 'public',

  'GET /api/health': 'public',
  'GET /api/openapi.json': 'public',
  'POST /api/auth/login': 'public',
  'POST /api/auth/refresh': 'public',
  'GET /api/deployments': 'deployments:read',
  'POST /api/deployments': 'deployments:write',
  'GET /api/deployments/{id}': 'deployments:read',
  'PATCH /api/deployments/{id}': 'deployments:write',
  'PUT /api/deployments/{id}': 'deployments:write',
  'DELETE /api/deployments/{id}': 'deployments:write',
  'POST /v1/deployments/{id}/actions': 'deployments:write',
  'POST /v1/inference': 'deployments:infer',
  'POST /v1/inference/test': 'deployments:infer',
  'GET /v1/recovery/deployments/{id}': 'deployments:read',
  'POST /v1/recovery/deployments/{id}': 'deployments:write',
  'DELETE /v1/recovery/deployments/{id}': 'deployments:write',
  'GET /v1/recovery': 'deployments:read',
  'POST /v1/recovery': 'deployments:write',
  'GET /v1/recovery/circuits': 'deployments:read',
  // A circuit is shared by every organization on the provider: closing one early is the platform's call.
  'POST /v1/recovery/circuits': 'admin:write',
  'GET /v1/admin/clusters': 'admin:read',
  'POST /v1/admin/clusters': 'admin:write',
  'GET /v1/admin/clusters/{id}': 'admin:read',
  'PATCH /v1/admin/clusters/{id}': 'admin:write',
  'DELETE /v1/admin/clusters/{id}': 'admin:write',
  'GET /api/webhooks': 'webhooks:read',
  'POST /api/webhooks': 'webhooks:write',
  'DELETE /api/webhooks/{id}': 'webhooks:write',
  'GET /api/webhooks/{id}/attempts': 'webhooks:read',
  'GET /v1/auth/sso': 'sso:read',
  'POST /v1/auth/sso': 'sso:write',
  'PUT /v1/auth/sso': 'sso:write',
  'DELETE /v1/auth/sso': 'sso:write',
  'GET /v1/enterprise/sso/configure': 'sso:read',
  'POST /v1/enterprise/sso/configure': 'sso:write',
  'GET /v1/enterprise/sso/verify': 'sso:read',
  // Checking a proposed issuer makes outbound requests on the caller's behalf: for those who may configure SSO.
  'POST /v1/enterprise/sso/verify': 'sso:write',
  'GET /v1/enterprise/sso/providers': 'sso:read',
  // The SSO login (start and the identity provider's redirect back) is how a caller without a credential gets one.
  'GET /v1/auth/sso/login': 'public',
  'GET /v1/auth/sso/callback/{provider}': 'public',
  'GET /v1/enterprise/roles': 'roles:read',
  'POST /v1/enterprise/roles': 'roles:write',
  'PUT /v1/enterprise/roles/{id}': 'roles:write',
  'DELETE /v1/enterprise/roles/{id}': 'roles:write',
  'GET /v1/enterprise/assignments': 'roles:read',
  'POST /v1/enterprise/assignments': 'roles:write',
  'DELETE /v1/enterprise/assignments': 'roles:write',
  'GET /v1/enterprise/audit': 'audit:read',
  'GET /v1/enterprise/audit/export': 'audit:read',
  'GET /v1/enterprise/analytics': 'analytics:read',

  'GET /v1/admin/feature-flags': 'admin:read',
  'POST /v1/admin/feature-flags': 'admin:write',
  'PATCH /v1/admin/feature-flags/{id}': 'admin:write',
  'DELETE /v1/admin/feature-flags/{id}': 'admin:write',
  'GET /v1/admin/customers': 'admin:read',
  'GET /v1/admin/audit': 'admin:read',
  'GET /v1/admin/security': 'admin:read',
  'GET /v1/admin/operations': 'admin:read',
  'GET /v1/admin/analytics': 'admin:read',
  'GET /v1/admin/errortracker/issues': 'admin:read',
  'POST /v1/admin/reports/generate': 'admin:write',
  'GET /v1/admin/reports/{id}': 'admin:read',
  'GET /v1/admin/reports/{id}/download': 'admin:read',
  'POST /v1/admin/deployments/bulk': 'admin:write',
  'GET /v1/admin/notifications': 'admin:read',
  'POST /v1/admin/notifications': 'admin:write',
  'PATCH /v1/admin/notifications/{id}': 'admin:write',
  'DELETE /v1/admin/notifications/{id}': 'admin:write',
  'GET /v1/admin/revenue': 'admin:read',
};

const READS: readonly Permission[] = PERMISSIONS.filter((p) => p.endsWith(':read'));

/** What an API key may do (a login session acts as full_access). */
export const SCOPE_PERMISSIONS: Readonly<Record<Scope, readonly Permission[]>> = {
  full_access: PERMISSIONS,
  // Deployment operations, inference included, plus the reads they need (the GPU catalog).
  deployments_only: ['deployments:read', 'deployments:write', 'deployments:infer', 'catalog:read'],
  read_only: READS,
};

/**
 * What each built-in role may do (a custom role holds its own subset of ORGANIZATION_PERMISSIONS); a
 * credential gets the intersection with its scope. Platform administration is not an organization role:
 * `admin:*` is granted by KILN_ADMIN_EMAILS alone.
 */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly OrganizationPermission[]>> = {
  owner: ORGANIZATION_PERMISSIONS,
  admin: ORGANIZATION_PERMISSIONS,
  member: ['deployments:read', 'deployments:write', 'deployments:infer', 'catalog:read', 'profile:read', 'profile:write', 'organization:read', 'team:read'],
  viewer: ['deployments:read', 'catalog:read', 'profile:read', 'profile:write', 'organization:read', 'team:read'],
};

/** `granted` is the caller's role's permission set: ROLE_PERMISSIONS of a built-in role, or a custom role's. */
export function isAllowed(permission: Permission, granted: readonly Permission[], scope: Scope, platformAdmin = false): boolean {
  if (permission === 'public') return true;
  if (!SCOPE_PERMISSIONS[scope].includes(permission)) return false;
  return permission.startsWith('admin:') ? platformAdmin : granted.includes(permission);
}
