// Row-level security: PostgreSQL keeps each organization's rows to itself. Every organization table has a
// policy (Migration20261123020000RowLevelSecurity) that lets the role TENANT_ROLE see only the rows of the
// organization named by the setting ORGANIZATION_SETTING. A request acting for an organization runs its
// queries inside `asOrganization`, and every connection the ORM's pool hands out is switched to that role
// and organization first, so a query that forgets its organization filter still sees nothing of another
// tenant's. Outside `asOrganization` (or inside `bypassingRowLevelSecurity`, which says so where it matters)
// queries run as the connecting user, which owns the tables and so is not held by their policies: platform
// administration, credential look-ups before the organization is known, the worker, migrations.
import { AsyncLocalStorage } from 'node:async_hooks';

/** Owns no table and lacks BYPASSRLS: the policies apply to it, whatever the connecting user may do. */
export const TENANT_ROLE = 'kiln_tenant';
/** What the policies compare an organization column with (`current_setting`). */
export const ORGANIZATION_SETTING = 'app.organization_id';

/** The organization whose rows queries may touch; null: every organization's (no policy applies). */
const scope = new AsyncLocalStorage<string | null>();

/** Runs `work` with its queries held to one organization's rows. */
export function asOrganization<T>(organizationId: string, work: () => Promise<T>): Promise<T> {
  return scope.run(organizationId, work);
}

/** Runs `work` as the connecting user, over every organization's rows: only for callers entitled to that. */
export function bypassingRowLevelSecurity<T>(work: () => Promise<T>): Promise<T> {
  return scope.run(null, work);
}

/** What Kysely's PostgreSQL driver hands `onReserveConnection`: the one method used here. */
interface ReservedConnection {
  executeQuery(query: { sql: string; parameters: readonly unknown[] }): Promise<unknown>;
}

// The organization each pooled connection was last switched to ('' : the connecting user, as a new one is).
const applied = new WeakMap<object, string>();

/**
 * MikroORM's `onReserveConnection`: runs on every checkout from the pool, before the connection's first
 * statement (and before BEGIN, so the switch outlives the transaction). A session setting rather than a
 * transaction-local one, so statements outside transactions need no BEGIN/COMMIT around them; it is set on
 * every checkout whose scope differs from the connection's, which costs one round trip only when the
 * connection last served another scope.
 */
export async function applyScope(connection: ReservedConnection): Promise<void> {
  const organizationId = scope.getStore() ?? '';
  if ((applied.get(connection) ?? '') === organizationId) return;
  // Unknown until the statement succeeds: a failure leaves the next checkout to set it again.
  applied.delete(connection);
  await connection.executeQuery({
    sql: `select set_config('role', $1, false), set_config('${ORGANIZATION_SETTING}', $2, false)`,
    parameters: [organizationId ? TENANT_ROLE : 'none', organizationId],
  });
  applied.set(connection, organizationId);
}
