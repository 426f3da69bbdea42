// Permissions: what each API-key scope and each organization role grants. Each route declares the one
// permission it needs beside its handler (RouteSpec.permission, a required field: nothing is reachable by
// accident); the router (http/routes.ts) checks it with isAllowed.

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

/**
 * Every permission a route may need. `public` needs no credential; `internal` needs Kiln's own metrics token
 * (KILN_METRICS_TOKEN, checked by http/routes.ts), which no user credential replaces; `admin:*` needs a
 * platform administrator.
 */
export const PERMISSIONS = [
  'deployments:read', 'deployments:write',
  // Calling a deployment's model: using it, not changing it, so a role or key may do one without the other.
  'deployments:infer',
  'catalog:read',
  // Changing the organization's own models (the catalog itself is read-only to everyone).
  'models:write',
  // Deployment templates: reading (public ones and the organization's) and writing the organization's, stars included.
  'templates:read', 'templates:write',
  'api-keys:read', 'api-keys:write',
  'webhooks:read', 'webhooks:write',
  // The organization's secrets (tokens, credentials): reading lists them (never a value), writing adds, tests, deletes.
  'secrets:read', 'secrets:write',
  // Alert rules, budgets and the alerts they fire (their delivery channels are webhooks).
  'alerts:read', 'alerts:write',
  'profile:read', 'profile:write',
  'organization:read', 'organization:write',
  'team:read', 'team:write',
  'roles:read', 'roles:write',
  'audit:read',
  'analytics:read',
  // Credits, usage, invoices, checkout and the customer portal: full-access credentials of owners and admins.
  'billing:read', 'billing:write',
  'sso:read', 'sso:write',
  'admin:read', 'admin:write',
] as const;
export type Permission = 'public' | 'internal' | (typeof PERMISSIONS)[number];
/** What an organization role, built-in or custom, may hold: everything but platform administration. */
export type OrganizationPermission = Exclude<(typeof PERMISSIONS)[number], `admin:${string}`>;
export const ORGANIZATION_PERMISSIONS = PERMISSIONS.filter((p): p is OrganizationPermission => !p.startsWith('admin:'));

// Billing is full access only (the spec's scope table): a read-only key does not see invoices or credits.
const READS: readonly Permission[] = PERMISSIONS.filter((p) => p.endsWith(':read') && p !== 'billing:read');

/** What an API key may do (a login session acts as full_access). */
export const SCOPE_PERMISSIONS: Readonly<Record<Scope, readonly Permission[]>> = {
  full_access: PERMISSIONS,
  // Deployment operations, inference and deploying a template included, plus the reads they need (the GPU
  // catalog, templates).
  deployments_only: ['deployments:read', 'deployments:write', 'deployments:infer', 'catalog:read', 'templates:read'],
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
  member: ['deployments:read', 'deployments:write', 'deployments:infer', 'catalog:read', 'models:write', 'templates:read', 'templates:write', 'profile:read', 'profile:write', 'organization:read', 'team:read', 'alerts:read'],
  viewer: ['deployments:read', 'catalog:read', 'templates:read', 'profile:read', 'profile:write', 'organization:read', 'team:read', 'alerts:read'],
};

/** `granted` is the caller's role's permission set: ROLE_PERMISSIONS of a built-in role, or a custom role's. */
export function isAllowed(permission: Permission, granted: readonly Permission[], scope: Scope, platformAdmin = false): boolean {
  if (permission === 'public') return true;
  if (permission === 'internal') return false;
  if (!SCOPE_PERMISSIONS[scope].includes(permission)) return false;
  return permission.startsWith('admin:') ? platformAdmin : granted.includes(permission);
}
