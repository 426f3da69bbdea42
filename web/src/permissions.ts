// What the signed-in user's role lets them change, so pages hide or disable controls the API would refuse.
// The API is the authority (it checks every call); this only spares the user a button that cannot work.
import type { Schemas } from './api.ts';
import { myProfile } from './profile.ts';
import { useApi } from './ui/useApi.ts';

export const BUILT_IN_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type BuiltInRole = (typeof BUILT_IN_ROLES)[number];

/** What each built-in role means, in words (the API's role table: control-plane/core/permissions.ts). */
export const ROLE_MEANINGS: Readonly<Record<BuiltInRole, string>> = {
  owner: 'Everything: deployments, billing, team, settings and API keys, and making others owners.',
  admin: 'Everything an owner does except making others owners.',
  member: 'Creates, changes and calls deployments, models and templates; reads the team and the organization. No billing, team changes, settings or API keys.',
  viewer: 'Reads deployments, templates, the team and the organization. Changes nothing, no billing.',
};

/** A permission of the API's table (GET /v1/settings/profile lists the caller's). */
export type Permission = Schemas['Profile']['permissions'][number];

export function isBuiltInRole(role: string): role is BuiltInRole {
  return (BUILT_IN_ROLES as readonly string[]).includes(role);
}

/**
 * The caller's role in the organization the session acts in, and what they may do there: the API says both
 * (GET /v1/settings/profile: `role`, `permissions`), custom roles included, so the dashboard keeps no copy of
 * the role table.
 */
export function useMyRole() {
  const me = useApi(() => myProfile.get(), []);
  const granted = new Set<string>(me.data?.permissions ?? []);
  return { role: me.data?.role, loading: me.loading, can: (permission: Permission) => !me.loading && granted.has(permission) };
}
