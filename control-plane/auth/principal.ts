import type { OrganizationPermission, RoleId, Scope } from '../core/permissions.ts';
import type { Plan } from '../../catalog/plans.ts';

/** The authenticated caller, acting in one organization. */
export interface Principal {
  /**
   * `service`: a service role key, acting on the organization its request names as a platform administrator;
   * its queries bypass row-level security.
   */
  readonly kind: 'session' | 'api_key' | 'service';
  readonly userId: string;
  readonly organizationId: string;
  readonly plan: Plan;
  readonly role: RoleId;
  /** What the role grants (built-in or custom), resolved with the membership; the scope narrows it. */
  readonly permissions: readonly OrganizationPermission[];
  /** A login session acts with full access, an API key with its own scope. */
  readonly scope: Scope;
  /** The API key or service role key the request was made with (audited as the record's key). */
  readonly apiKeyId?: string;
  /** Listed in KILN_ADMIN_EMAILS: may use the platform administration routes. */
  readonly platformAdmin: boolean;
}
