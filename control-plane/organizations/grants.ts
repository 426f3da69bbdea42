// Nobody grants more than they hold: a role created, changed or assigned, and the role an invitation
// offers, must lie within the caller's own permissions (their role narrowed by the credential's scope).
import type { Principal } from '../auth/principal.ts';
import { ForbiddenError } from '../core/errors.ts';
import { isAllowed, type OrganizationPermission } from '../core/permissions.ts';

export function assertWithinCaller(principal: Principal, permissions: readonly OrganizationPermission[], what: string): void {
  const beyond = permissions.filter((p) => !isAllowed(p, principal.permissions, principal.scope));
  if (beyond.length) throw new ForbiddenError(`Insufficient permissions: ${what} holds permissions you do not have (${beyond.join(', ')})`, { permissions: beyond });
}
