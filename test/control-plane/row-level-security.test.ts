// Row-level security, probed as an attacker would: inside a tenant's request context (the middleware every
// route runs, http/database-scope.ts), queries that deliberately leave out the organization filter, on
// every organization table, see, change and create nothing of another organization. The tables come from
// the entity list (ENTITIES): a new table is either an organization's (and then needs a policy and a seed
// row here) or declared a platform table below, so none slips through without a decision.
import test from 'ava';
import type { QueryResult } from '@mikro-orm/core';
import type { ParameterizedContext } from 'koa';
import { asOrganization, bypassingRowLevelSecurity, TENANT_ROLE } from '../../control-plane/core/row-level-security.ts';
import type { Permission } from '../../control-plane/core/permissions.ts';
import { ENTITIES } from '../../control-plane/database/orm.ts';
import type { AppState } from '../../control-plane/http/context.ts';
import { databaseScope } from '../../control-plane/http/database-scope.ts';
import type { Principal } from '../../control-plane/auth/principal.ts';
import { signup, startTestApi, type TestApi } from '../support/control-plane.ts';

/** Tables without an organization column that still belong to one, and the column leading to their parent's. */
const THROUGH_PARENT: Readonly<Record<string, { column: string; parent: string }>> = {
  webhook_attempt: { column: 'subscription_id', parent: 'webhook_subscription' },
};
/** Shared by every organization (or by none): no policy. */
const PLATFORM_TABLES = new Set([
  'user', 'email_verification', 'circuit', 'feature_flag', 'notification', 'error_issue', 'report', 'service_key',
  // A report's CSV (every organization's data), which kiln_tenant has no grant on at all.
  'report_chunk',
  // Keyed by caller (organization and credential); only the idempotency middleware reads it, by that key.
  'idempotency_record',
  // A user's stars, counted across organizations; read only for templates the caller may see.
  'template_star',
  // Each API replica's heartbeat (live updates): replica ids and socket counts, read by no tenant's query.
  'live_replica',
  // GPU clusters' capacity decisions, read by platform administrators alone; kiln_tenant has no grant on it.
  'cluster_event',
]);

/** One row of `table` belonging to the organization (and its user), for the tables signing up does not fill. */
const SEEDS: Readonly<Record<string, string>> = {
  alert_rule: `insert into alert_rule (id, created_at, organization_id, name, metric, quantile, comparison, threshold, for_seconds, period, basis, action, enabled, state, firings, updated_at)
    values ('alr_' || $3, now(), $1, 'r', 'latency', 'p95', 'above', 1, 0, 'month', 'actual', 'notify', true, 'ok', 0, now())`,
  alert: `insert into alert (id, created_at, organization_id, sequence, name, metric, message, state, started_at, fired_at) values ('alt_' || $3, now(), $1, 0, 'a', 'manual', 'm', 'firing', now(), now())`,
  alert_event: `insert into alert_event (id, created_at, organization_id, alert_id, type, payload) values ('ale_' || $3, now(), $1, 'alt_' || $3, 'alert.firing', '{}')`,
  api_key: `insert into api_key (id, created_at, organization_id, user_id, name, scope, prefix, key_hash) values ('key_' || $3, now(), $1, $2, 'k', 'read_only', 'sk_x', 'hash_' || $3)`,
  audit_log: `insert into audit_log (id, created_at, organization_id, action, resource_type, user_id, ip_address, status_code) values ('aud_' || $3, now(), $1, 'probe', 'probe', $2, '127.0.0.1', 200)`,
  custom_role: `insert into custom_role (id, created_at, organization_id, name, permissions, updated_at) values ('role_' || $3, now(), $1, 'r', '[]', now())`,
  deployment: `insert into deployment (id, created_at, organization_id, name, model, runtime, gpu, status, endpoint, replicas, min_replicas, max_replicas, current_replicas, updated_at)
    values ('dep_' || $3, now(), $1, 'd' || $3, 'm', 'vllm', 'nvidia-l4', 'running', 'https://e', 1, 1, 1, 1, now())`,
  deployment_event: `insert into deployment_event (id, created_at, deployment_id, organization_id, type, generation, payload) values ('evt_' || $3, now(), 'dep_' || $3, $1, 'deployment.running', 1, '{}')`,
  invitation: `insert into invitation (id, created_at, organization_id, email, role, invited_by_id, token_hash, expires_at, state) values ('inv_' || $3, now(), $1, 'i@example.com', 'member', $2, 'hash_' || $3, now(), 'pending')`,
  replica_record: `insert into replica_record (id, created_at, organization_id, deployment_id, status, replicas, gpu, gpus_per_replica, observed_at) values ('rep_' || $3, now(), $1, 'dep_' || $3, 'running', 1, 'nvidia-l4', 1, now())`,
  usage_interval: `insert into usage_interval (id, created_at, organization_id, starts_at, ends_at, usage_units, debit_cents) values ('usi_' || $3, now(), $1, now(), now(), 0, 0)`,
  usage_charge: `insert into usage_charge (id, created_at, organization_id, interval_id, starts_at, deployment_id, deployment_name, gpu, gpu_ms, rate_cents_per_hour, usage_units)
    values ('usc_' || $3, now(), $1, 'usi_' || $3, now(), 'dep_' || $3, 'd', 'nvidia-l4', 0, 80, 0)`,
  sso_configuration: `insert into sso_configuration (id, created_at, organization_id, provider, issuer, client_id, sealed_client_secret, allowed_domains, default_role, jit_provisioning, updated_at)
    values ('sso_' || $3, now(), $1, 'oidc', 'https://idp', 'c', 's', '[]', 'member', false, now())`,
  sso_login: `insert into sso_login (id, created_at, organization_id, provider, state_hash, nonce, sealed_code_verifier, redirect_uri, expires_at) values ('ssl_' || $3, now(), $1, 'oidc', 'hash_' || $3, 'n', 'v', 'https://r', now())`,
  optimization_policy: `insert into optimization_policy (id, created_at, organization_id, deployment_id, auto_apply, updated_at) values ('opt_' || $3, now(), $1, 'dep_' || $3, false, now())`,
  organization_model: `insert into organization_model (id, created_at, organization_id, reference, reference_key, default_vllm_args, updated_at)
    values ('mdl_' || $3, now(), $1, 's3://models/' || $3, 's3://models/' || $3, '[]', now())`,
  template: `insert into template (id, created_at, organization_id, name, description, visibility, latest_version, created_by, updated_at) values ('tpl_' || $3, now(), $1, 't', '', 'private', 1, $2, now())`,
  template_version: `insert into template_version (id, created_at, template_id, organization_id, version, model, gpu, gpus_per_replica, replicas, min_replicas, max_replicas, dtype, vllm_args, created_by)
    values ('tpv_' || $3, now(), 'tpl_' || $3, $1, 1, 'm/m', 'nvidia-l4', 1, 1, 1, 1, 'auto', '[]', $2)`,
  template_subscription: `insert into template_subscription (id, created_at, user_id, organization_id, template_id, reason) values ('tsb_' || $3, now(), $2, $1, 'tpl_' || $3, 'subscribed')`,
  assistant_conversation: `insert into assistant_conversation (id, created_at, user_id, organization_id, title, updated_at) values ('cnv_' || $3, now(), $2, $1, 't', now())`,
  // Its conversation is made alongside.
  assistant_message: `with c as (insert into assistant_conversation (id, created_at, user_id, organization_id, title, updated_at) values ('cnvm' || $3, now(), $2, $1, 't', now()) returning id)
    insert into assistant_message (id, created_at, conversation_id, organization_id, role, content, citations) select 'amg_' || $3, now(), c.id, $1, 'user', 'q', '[]' from c`,
  invoice: `insert into invoice (id, created_at, organization_id, number, period_start, period_end, plan, plan_fee_cents, usage_cents, credits_applied_cents, total_cents, currency, lines, issued_at)
    values ('ivc_' || $3, now(), $1, 1, '2026-01-01', '2026-02-01', 'startup', 4900, 0, 0, 4900, 'usd', '[]', now())`,
  notification_preference: `insert into notification_preference (id, created_at, user_id, organization_id, in_app, email, updated_at) values ('npf_' || $3, now(), $2, $1, '{}', '{}', now())`,
  // The announcement it reads is a platform row, made alongside.
  notification_read: `with n as (insert into notification (id, created_at, title, message, severity, updated_at) values ('ntf_' || $3, now(), 't', 'm', 'info', now()) returning id)
    insert into notification_read (id, created_at, user_id, organization_id, notification_id) select 'ntr_' || $3, now(), $2, $1, n.id from n`,
  notification_mail: `insert into notification_mail (id, created_at, user_id, organization_id, kind, payload) values ('nml_' || $3, now(), $2, $1, 'template.updated', '{}')`,
  live_event: `insert into live_event (organization_id, user_id, type, payload) values ($1, $2, 'notification.pushed', '{}')`,
  live_ticket: `insert into live_ticket (id, created_at, organization_id, user_id, principal, expires_at) values ('wst_' || $3, now(), $1, $2, '{}', now())`,
  user_notification: `insert into user_notification (id, created_at, user_id, organization_id, kind, payload) values ('unt_' || $3, now(), $2, $1, 'template.updated', '{}')`,
  checkout: `insert into checkout (id, created_at, organization_id, stripe_session_id, kind, amount_cents, status, url) values ('chk_' || $3, now(), $1, 'cs_' || $3, 'credits', 500, 'open', 'https://checkout')`,
  payment_event: `insert into payment_event (id, created_at, stripe_event_id, webhook, type, organization_id, outcome) values ('pev_' || $3, now(), 'evt_' || $3, 'payprovider', 'checkout.session.completed', $1, 'o')`,
  // An organization's own cluster (the shared ones have no organization: see the test below).
  gpu_cluster: `insert into gpu_cluster (id, created_at, organization_id, name, provider, status, gpus, updated_at) values ('clu_' || $3, now(), $1, 'own', 'kubernetes', 'ready', '[]', now())`,
  onboarding_state: `insert into onboarding_state (id, created_at, user_id, organization_id, skipped, updated_at) values ('onb_' || $3, now(), $2, $1, '[]', now())`,
  organization_secret: `insert into organization_secret (id, created_at, organization_id, name, type, sealed_value, last_four, details) values ('sec_' || $3, now(), $1, 'n', 'huggingface_token', 'v2.k.n.b', 'abcd', '{}')`,
  webhook_subscription: `insert into webhook_subscription (id, created_at, organization_id, url, events, sealed_secret) values ('whs_' || $3, now(), $1, 'https://h', '[]', 's')`,
  webhook_attempt: `insert into webhook_attempt (id, created_at, subscription_id, delivery_id, event_id, attempt, duration_ms) values ('wha_' || $3, now(), 'whs_' || $3, 'd', 'e', 1, 1)`,
};

let api: TestApi;
let a: Awaited<ReturnType<typeof signup>>;
let b: Awaited<ReturnType<typeof signup>>;
/** Every organization table, with the SQL expression naming the organization a row belongs to. */
let owned: Array<{ table: string; owner: string }>;

test.before(async () => {
  // No shared cluster: every gpu_cluster row is an organization's until the test of shared clusters adds one.
  api = await startTestApi(import.meta.filename, { defaultCluster: false });
  [a, b] = [await signup(api, 'tenant-a'), await signup(api, 'tenant-b')];
  owned = [];
  for (const entity of ENTITIES) {
    const meta = api.orm.getMetadata(entity);
    if (meta.abstract) continue;
    const table = meta.tableName;
    const columns = Object.values(meta.properties).flatMap((property) => property.fieldNames ?? []);
    if (table === 'organization') owned.push({ table, owner: 'id' });
    else if (columns.includes('organization_id')) owned.push({ table, owner: 'organization_id' });
    else if (THROUGH_PARENT[table]) {
      const { column, parent } = THROUGH_PARENT[table];
      owned.push({ table, owner: `(select organization_id from "${parent}" p where p.id = "${table}".${column})` });
    } else if (!PLATFORM_TABLES.has(table)) throw new Error(`table ${table} has no organization column: list it in THROUGH_PARENT or PLATFORM_TABLES`);
  }
  for (const [index, tenant] of [a, b].entries()) {
    // Returning the parameters gives each a type, whichever the seed uses.
    for (const table of Object.keys(SEEDS).sort((x, y) => seedOrder(x) - seedOrder(y))) {
      await api.pool.query(`${SEEDS[table]!} returning $1::text, $2::text, $3::text`, [tenant.organizationId, tenant.userId, idSuffix(`rls${index}`)]);
    }
  }
});
test.after.always(() => api?.close());

/** Ids are a prefix and 20 base-36 characters (lib/ids.ts); the seeds' look the same. */
const idSuffix = (start: string) => start.padEnd(20, '0');
// Parents before children.
const seedOrder = (table: string) => (['deployment_event', 'alert_event', 'usage_charge', 'webhook_attempt', 'template_version', 'template_subscription', 'optimization_policy'].includes(table) ? 1 : 0);

/** The organizations the rows of `table` belong to, as the connecting user (who sees them all) counts them. */
async function ownersOf(table: string, owner: string): Promise<Map<string, number>> {
  const { rows } = await api.pool.query<{ org: string; n: string }>(`select ${owner} as org, count(*) as n from "${table}" group by 1`);
  return new Map(rows.map((row) => [row.org, Number(row.n)]));
}

/** Runs `work` as a route declaring `permission` runs its handler for `principal`. */
function inRequest<T>(permission: Permission, principal: Partial<Principal> | undefined, work: () => Promise<T>): Promise<T> {
  let result!: T;
  const ctx = { state: { principal } } as unknown as ParameterizedContext<AppState>;
  return Promise.resolve(databaseScope(permission)(ctx, async () => { result = await work(); })).then(() => result);
}

const unfiltered = (table: string) => api.orm.em.fork().getConnection().execute<Record<string, unknown>[]>(`select * from "${table}"`);

test('every organization table holds rows of both organizations, so the probes below prove something', async (t) => {
  t.true(owned.length >= 13, owned.map((o) => o.table).join(', '));
  for (const { table, owner } of owned) {
    const owners = await ownersOf(table, owner);
    t.true((owners.get(a.organizationId) ?? 0) > 0 && (owners.get(b.organizationId) ?? 0) > 0, `${table} needs a row of each organization: add it to SEEDS`);
  }
});

test('an unfiltered select inside a tenant\'s request returns that tenant\'s rows only, on every organization table', async (t) => {
  for (const { table, owner } of owned) {
    const before = (await ownersOf(table, owner)).get(a.organizationId) ?? 0;
    const seen = await inRequest('deployments:read', { kind: 'session', organizationId: a.organizationId }, async () =>
      api.orm.em.fork().getConnection().execute<{ org: string }[]>(`select ${owner} as org from "${table}"`));
    // Audit records of the sign-ups may still be landing: every row of the tenant's, none of the other's.
    t.true(seen.length >= before && seen.length <= ((await ownersOf(table, owner)).get(a.organizationId) ?? 0), table);
    t.deepEqual([...new Set(seen.map((row) => row.org))], [a.organizationId], table);
  }
});

test('the ORM\'s own queries are held too: find without a filter, update and delete without a condition', async (t) => {
  for (const entity of ENTITIES) {
    const meta = api.orm.getMetadata(entity);
    const probe = owned.find((o) => o.table === meta.tableName);
    if (meta.abstract || !probe) continue;
    const found = await asOrganization(b.organizationId, () => api.orm.em.fork().find(entity, {}));
    t.true(found.length > 0 && found.length <= ((await ownersOf(probe.table, probe.owner)).get(b.organizationId) ?? 0), meta.tableName);
    const ids = found.map((row) => (row as { id: string }).id);
    const { rows } = await api.pool.query(`select distinct ${probe.owner} as org from "${probe.table}" where id = any($1)`, [ids]);
    t.deepEqual(rows, [{ org: b.organizationId }], meta.tableName);
  }
  // Each affects the tenant's own rows alone; the other organization's stay as they were.
  const updated = await asOrganization(a.organizationId, () => api.orm.em.fork().getConnection().execute<QueryResult>(`update "deployment" set name = name || '-a'`, [], 'run'));
  t.is(updated.affectedRows, 1);
  await api.pool.query(`insert into custom_role (id, created_at, organization_id, name, permissions, updated_at) values ('role_scratchb', now(), $1, 'scratch', '[]', now())`, [b.organizationId]);
  const deleted = await asOrganization(a.organizationId, async () => {
    const em = api.orm.em.fork();
    await em.getConnection().execute(`insert into custom_role (id, created_at, organization_id, name, permissions, updated_at) values ('role_scratcha', now(), ?, 'scratch', '[]', now())`, [a.organizationId]);
    return em.getConnection().execute<QueryResult>(`delete from "custom_role" where name = 'scratch'`, [], 'run');
  });
  t.is(deleted.affectedRows, 1);
  const { rows } = await api.pool.query(`select d.name, r.id as role from deployment d, custom_role r where d.organization_id = $1 and r.organization_id = $1 and r.name = 'scratch'`, [b.organizationId]);
  t.deepEqual(rows, [{ name: `d${idSuffix('rls1')}`, role: 'role_scratchb' }]);
});

test('a tenant cannot write rows into another organization', async (t) => {
  await t.throwsAsync(asOrganization(a.organizationId, () => api.orm.em.fork().getConnection().execute(
    `insert into custom_role (id, created_at, organization_id, name, permissions, updated_at) values ('role_forged', now(), ?, 'forged', '[]', now())`, [b.organizationId])),
  { message: /row-level security/ });
  await t.throwsAsync(asOrganization(a.organizationId, () => api.orm.em.fork().getConnection().execute(
    `update "webhook_subscription" set organization_id = ?`, [b.organizationId])), { message: /row-level security/ });
});

// Serial: the other tests expect each tenant to see its own rows alone, which this public row changes while it lasts.
test.serial('a public template and its versions are read by every tenant and changed by none but its organization', async (t) => {
  const id = `tpl_${idSuffix('public')}`;
  await api.pool.query(`insert into template (id, created_at, organization_id, name, description, visibility, latest_version, created_by, updated_at) values ($1, now(), $2, 'shared', '', 'public', 1, $3, now())`, [id, a.organizationId, a.userId]);
  await api.pool.query(`insert into template_version (id, created_at, template_id, organization_id, version, model, gpu, gpus_per_replica, replicas, min_replicas, max_replicas, dtype, vllm_args, created_by)
    values ($1, now(), $2, $3, 1, 'm/m', 'nvidia-l4', 1, 1, 1, 1, 'auto', '[]', $4)`, [`tpv_${idSuffix('public')}`, id, a.organizationId, a.userId]);
  const asB = (statement: string) => asOrganization(b.organizationId, () => api.orm.em.fork().getConnection().execute<{ id: string }[]>(statement, [], 'all'));
  t.deepEqual(await asB(`select id from "template" where visibility = 'public'`), [{ id }]);
  t.is((await asB(`select id from "template_version" where template_id = '${id}'`)).length, 1);
  const changed = await asOrganization(b.organizationId, () => api.orm.em.fork().getConnection().execute<QueryResult>(`update "template" set name = 'taken over' where id = ?`, [id], 'run'));
  t.is(changed.affectedRows, 0);
  t.is((await asOrganization(b.organizationId, () => api.orm.em.fork().getConnection().execute<QueryResult>(`delete from "template_version" where template_id = ?`, [id], 'run'))).affectedRows, 0);
  await t.throwsAsync(asOrganization(b.organizationId, () => api.orm.em.fork().getConnection().execute(
    `insert into template_version (id, created_at, template_id, organization_id, version, model, gpu, gpus_per_replica, replicas, min_replicas, max_replicas, dtype, vllm_args, created_by)
      values ('tpv_forged', now(), ?, ?, 2, 'm/m', 'nvidia-l4', 1, 1, 1, 1, 'auto', '[]', 'x')`, [id, a.organizationId])), { message: /row-level security/ });
  const { rows } = await api.pool.query(`select name from template where id = $1`, [id]);
  t.deepEqual(rows, [{ name: 'shared' }]);
  await api.pool.query(`delete from template_version where template_id = $1`, [id]);
  await api.pool.query(`delete from template where id = $1`, [id]);
});

// Serial, as the public template's: a shared cluster is a row of no organization, seen by every tenant while it lasts.
test.serial('a shared cluster is read by every tenant and changed by none; an organization\'s own cluster is hidden from the others', async (t) => {
  const id = `clu_${idSuffix('shared')}`;
  await api.pool.query(`insert into gpu_cluster (id, created_at, name, provider, status, gpus, updated_at) values ($1, now(), 'shared', 'kubernetes', 'ready', '[]', now())`, [id]);
  const asB = (statement: string, params: unknown[] = []) => asOrganization(b.organizationId, () => api.orm.em.fork().getConnection().execute<{ id: string }[]>(statement, params, 'all'));
  t.deepEqual((await asB(`select id from "gpu_cluster" order by organization_id nulls first`)).map((row) => row.id), [id, `clu_${idSuffix('rls1')}`], 'the shared one and its own, not a\'s');
  const changed = await asOrganization(b.organizationId, () => api.orm.em.fork().getConnection().execute<QueryResult>(`update "gpu_cluster" set name = 'taken over' where id = ?`, [id], 'run'));
  t.is(changed.affectedRows, 0);
  t.is((await asOrganization(b.organizationId, () => api.orm.em.fork().getConnection().execute<QueryResult>(`delete from "gpu_cluster" where id = ?`, [id], 'run'))).affectedRows, 0);
  // Nor may a tenant add a shared cluster, or one of another organization.
  for (const owner of [null, a.organizationId]) {
    await t.throwsAsync(asB(`insert into gpu_cluster (id, created_at, organization_id, name, provider, status, gpus, updated_at) values ('clu_forged', now(), ?, 'forged', 'kubernetes', 'ready', '[]', now())`, [owner]),
      { message: /row-level security/ });
  }
  t.deepEqual((await api.pool.query(`select name from gpu_cluster where id = $1`, [id])).rows, [{ name: 'shared' }]);
  await api.pool.query(`delete from gpu_cluster where id = $1`, [id]);
});

test('the tenant role is held by the policies: no superuser, no BYPASSRLS, owns no table', async (t) => {
  const { rows: [role] } = await api.pool.query(`select rolsuper, rolbypassrls from pg_roles where rolname = $1`, [TENANT_ROLE]);
  t.deepEqual(role, { rolsuper: false, rolbypassrls: false });
  const { rows: ownedTables } = await api.pool.query(`select tablename from pg_tables where tableowner = $1`, [TENANT_ROLE]);
  t.deepEqual(ownedTables, []);
  const [who] = await asOrganization(a.organizationId, () => api.orm.em.fork().getConnection().execute<{ role: string; org: string }[]>(
    `select current_user as role, current_setting('app.organization_id') as org`));
  t.deepEqual(who, { role: TENANT_ROLE, org: a.organizationId });
});

test('platform administration, public routes and the service role key bypass it, explicitly; so does work outside any request', async (t) => {
  const both = (rows: Record<string, unknown>[]) => new Set(rows.map((row) => row.organization_id)).size;
  t.is(both(await inRequest('admin:read', { kind: 'session', organizationId: a.organizationId }, () => unfiltered('deployment'))), 2);
  t.is(both(await inRequest('public', undefined, () => unfiltered('deployment'))), 2);
  t.is(both(await inRequest('deployments:read', { kind: 'service', organizationId: a.organizationId }, () => unfiltered('deployment'))), 2);
  t.is(both(await bypassingRowLevelSecurity(() => unfiltered('deployment'))), 2);
  t.is(both(await unfiltered('deployment')), 2);
});

test('pooled connections switching between tenants and the bypass never carry one\'s scope into another\'s', async (t) => {
  const scopes = [a.organizationId, b.organizationId, null];
  const results = await Promise.all(Array.from({ length: 60 }, async (_, i) => {
    const organizationId = scopes[i % 3]!;
    const query = () => api.orm.em.fork().getConnection().execute<{ organization_id: string }[]>(`select organization_id from "deployment"`);
    const rows = organizationId ? await asOrganization(organizationId, query) : await bypassingRowLevelSecurity(query);
    return { organizationId, owners: [...new Set(rows.map((row) => row.organization_id))].sort() };
  }));
  for (const { organizationId, owners } of results) {
    t.deepEqual(owners, organizationId ? [organizationId] : [a.organizationId, b.organizationId].sort());
  }
});

test('a transaction inside a tenant\'s request runs under the tenant\'s scope throughout', async (t) => {
  const names = await asOrganization(b.organizationId, () => api.orm.em.fork().transactional(async (em) => {
    await em.getConnection().execute(`select 1`, [], 'all', em.getTransactionContext());
    return em.getConnection().execute<{ name: string }[]>(`select name from "deployment"`, [], 'all', em.getTransactionContext());
  }));
  t.deepEqual(names.map((row) => row.name), [`d${idSuffix('rls1')}`]);
});

test('every route, given another organization\'s ids, answers as it does for ids that do not exist', async (t) => {
  const ids: string[] = [a.organizationId, a.userId];
  for (const { table, owner } of owned) {
    const { rows } = await api.pool.query<{ id: string }>(`select id from "${table}" where ${owner} = $1`, [a.organizationId]);
    ids.push(...rows.map((row) => row.id));
  }
  const routes = api.app.routes.filter((route) => route.path.includes('{') && route.permission !== 'public' && !route.permission.startsWith('admin:'));
  t.true(routes.length >= 5, routes.map((route) => `${route.method} ${route.path}`).join(", "));
  const differences: string[] = [];
  let notFound = 0;
  for (const route of routes) {
    for (const id of ids) {
      const missing = `${id.slice(0, id.indexOf('_') + 1)}${idSuffix('absent')}`;
      const call = async (value: string) => {
        const path = route.path.replace(/\{\w+\}/g, value) + (route.path.startsWith('/v1/') ? `?orgId=${b.organizationId}` : '');
        return (await api.request(route.method, path, { token: b.token })).status;
      };
      const [theirs, none] = [await call(id), await call(missing)];
      if (theirs !== none) differences.push(`${route.method} ${route.path} ${id}: ${theirs}, absent ${none}`);
      if (theirs === 404) notFound += 1;
    }
  }
  t.deepEqual(differences, []);
  t.true(notFound > routes.length, `${notFound} answers 404`);
});
