// The organization's activity feed: one UNION ALL over the records Kiln keeps anyway (deployment lifecycle
// events, the audited actions on deployments (Kiln's own and its users'), invitations and memberships, API keys, alert
// events, the credit ledger, balance notices, invoices), each branch shaped alike, read newest first with a
// keyset over (occurredAt, id). Metering debits are left out: one every metering interval would bury the
// rest; the balance notices (low, exhausted, stopped) say what matters of them.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import type { CursorCodec } from '../core/pagination.ts';
import { isAllowed } from '../core/permissions.ts';
import type { ActivityBody, ActivityCategory, ListActivityInput } from './schemas.ts';

interface Row {
  id: string;
  type: string;
  category: ActivityCategory;
  occurred_at: Date;
  actor_id: string | null;
  actor_email: string | null;
  resource_type: string;
  resource_id: string;
  resource_name: string | null;
  details: Record<string, unknown> | null;
}
/** A row's place in the ordering: its time (ISO 8601, milliseconds) and id. */
type Position = readonly [occurredAt: string, id: string];

const ORDERING = 'activity:-occurred_at';

// Every branch selects id, type, category, occurred_at, actor_id, resource_type, resource_id, resource_name,
// details, and takes the organization as its one `?`. Times are cut to milliseconds, as a cursor carries them,
// so a position read back compares equal to the row it came from.
const ms = (column: string) => `date_trunc('milliseconds', ${column})`;
const BRANCHES: Readonly<Record<ActivityCategory, readonly string[]>> = {
  deployments: [
    `SELECT e.id, e.type, 'deployments', ${ms('e.created_at')}, NULL, 'deployment', e.deployment_id, d.name, e.payload->'data'
     FROM deployment_event e LEFT JOIN deployment d ON d.id = e.deployment_id WHERE e.organization_id = ?`,
    // What Kiln itself did to a deployment (a budget's or the credits' stop, an optimization).
    `SELECT a.id, a.action, 'deployments', ${ms('a.created_at')}, a.user_id, 'deployment', a.resource_id, d.name, a.details
     FROM audit_log a LEFT JOIN deployment d ON d.id = a.resource_id
     WHERE a.organization_id = ? AND a.user_id LIKE 'system:%' AND a.resource_type = 'deployment' AND a.resource_id IS NOT NULL`,
    // What a user asked of one (stop, start, restart, scale, a new configuration), typed as Kiln's own
    // (deployment.stop, ...): accepted requests only (a refused one is audited too), and only about this
    // organization's own deployments. The workflow's edges that follow (stopped, scaled, ...) are the first
    // branch's; a record from before the action was noted in its details says no action and is left out.
    `SELECT a.id, CASE a.action WHEN 'deploymentActionV1' THEN 'deployment.' || (a.details->>'action') ELSE 'deployment.update' END,
       'deployments', ${ms('a.created_at')}, a.user_id, 'deployment', a.resource_id, d.name, a.details
     FROM audit_log a JOIN deployment d ON d.id = a.resource_id AND d.organization_id = a.organization_id
     WHERE a.organization_id = ? AND a.resource_type = 'deployment' AND a.status_code BETWEEN 200 AND 299 AND a.user_id NOT LIKE 'system:%'
       AND a.action IN ('deploymentActionV1', 'updateDeployment', 'replaceDeployment')
       AND (a.action <> 'deploymentActionV1' OR a.details->>'action' IN ('stop', 'start', 'restart', 'scale'))`,
  ],
  members: [
    `SELECT i.id, 'member.invited', 'members', ${ms('i.created_at')}, i.invited_by_id, 'invitation', i.id, i.email, jsonb_build_object('role', i.role)
     FROM invitation i WHERE i.organization_id = ?`,
    `SELECT i.id || '.' || i.state, 'member.invitation_' || i.state, 'members', ${ms('i.answered_at')}, NULL, 'invitation', i.id, i.email, jsonb_build_object('role', i.role)
     FROM invitation i WHERE i.organization_id = ? AND i.state IN ('declined', 'revoked') AND i.answered_at IS NOT NULL`,
    `SELECT m.id, 'member.joined', 'members', ${ms('m.created_at')}, m.user_id, 'user', m.user_id, u.email, jsonb_build_object('role', m.role)
     FROM membership m JOIN "user" u ON u.id = m.user_id WHERE m.organization_id = ?`,
  ],
  // Names and prefixes only: a key's value is never stored, its hash never leaves here.
  keys: [
    `SELECT k.id, 'api_key.created', 'keys', ${ms('k.created_at')}, k.user_id, 'api_key', k.id, k.name, jsonb_build_object('scope', k.scope, 'prefix', k.prefix)
     FROM api_key k WHERE k.organization_id = ?`,
    `SELECT k.id || '.rotated', 'api_key.rotated', 'keys', ${ms('k.rotated_at')}, NULL, 'api_key', k.id, k.name, jsonb_build_object('prefix', k.prefix)
     FROM api_key k WHERE k.organization_id = ? AND k.rotated_at IS NOT NULL`,
    `SELECT k.id || '.revoked', 'api_key.revoked', 'keys', ${ms('k.revoked_at')}, NULL, 'api_key', k.id, k.name, jsonb_build_object('prefix', k.prefix)
     FROM api_key k WHERE k.organization_id = ? AND k.revoked_at IS NOT NULL`,
  ],
  alerts: [
    // A rule's alert is the evaluation workflow's doing; one raised by hand does not say whose hand.
    `SELECT e.id, e.type, 'alerts', ${ms('e.created_at')}, CASE WHEN a.rule_id IS NULL THEN NULL ELSE 'system:alerts' END, 'alert', e.alert_id, a.name, jsonb_build_object('message', a.message)
     FROM alert_event e LEFT JOIN alert a ON a.id = e.alert_id WHERE e.organization_id = ?`,
  ],
  billing: [
    `SELECT c.id, 'credits.' || c.kind, 'billing', ${ms('c.created_at')}, NULL, 'credit_entry', c.id, NULL,
       jsonb_build_object('amountCents', c.amount_cents, 'balanceAfterCents', c.balance_after_cents, 'description', c.description)
     FROM credit_entry c WHERE c.organization_id = ? AND c.kind <> 'debit'`,
    // A notice is written once per owner and admin, in one statement (one created_at): one entry per notice.
    `SELECT DISTINCT ON (n.kind, n.created_at) n.id, n.kind, 'billing', ${ms('n.created_at')}, 'system:billing', 'organization', n.organization_id, NULL, n.payload
     FROM user_notification n WHERE n.organization_id = ? AND n.kind IN ('credits.low', 'credits.exhausted', 'credits.stopped')
     ORDER BY n.kind, n.created_at, n.id`,
    `SELECT v.id, 'invoice.issued', 'billing', ${ms('v.issued_at')}, 'system:billing', 'invoice', v.id, 'Invoice ' || v.number,
       jsonb_build_object('totalCents', v.total_cents, 'currency', v.currency, 'periodStart', v.period_start)
     FROM invoice v WHERE v.organization_id = ?`,
  ],
};

const COLUMNS = 'id, type, category, occurred_at, actor_id, resource_type, resource_id, resource_name, details';

export interface ActivityDeps {
  cursors: CursorCodec;
}

export function createActivityService(deps: ActivityDeps) {
  return {
    async list(em: EntityManager, principal: Principal, query: ListActivityInput) {
      const after = query.cursor ? (JSON.parse(deps.cursors.decode(query.cursor, ORDERING)) as Position) : undefined;
      // Billing lines only for callers whose role and credential may read billing, as its own routes ask.
      const billing = isAllowed('billing:read', principal.permissions, principal.scope, principal.platformAdmin);
      const visible = (query.category ?? [...Object.keys(BRANCHES)] as ActivityCategory[]).filter((category) => category !== 'billing' || billing);
      const branches = visible.flatMap((category) => BRANCHES[category]);
      if (!branches.length) return { items: [], hasMore: false, nextCursor: null };
      const where: string[] = [];
      const filters: unknown[] = [];
      if (query.type) { where.push('b.type = ?'); filters.push(query.type); }
      if (query.resourceId) { where.push('b.resource_id = ?'); filters.push(query.resourceId); }
      if (query.from) { where.push('b.occurred_at >= ?::timestamptz'); filters.push(query.from); }
      if (query.to) { where.push('b.occurred_at < ?::timestamptz'); filters.push(query.to); }
      if (after) { where.push('(b.occurred_at, b.id) < (?::timestamptz, ?)'); filters.push(after[0], after[1]); }
      // Each branch filtered and cut to the page on its own: the page is among the branches' first rows,
      // so the merge sorts at most (limit + 1) rows per branch, however long the organization's history.
      const branch = (sql: string) => `(SELECT * FROM (${sql}) AS b (${COLUMNS})
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY b.occurred_at DESC, b.id DESC LIMIT ?)`;
      const params = branches.flatMap(() => [principal.organizationId, ...filters, query.limit + 1]);
      params.push(query.limit + 1);
      const rows = await em.getConnection().execute<Row[]>(`
        SELECT f.*, u.email AS actor_email
        FROM (${branches.map(branch).join('\nUNION ALL\n')}) AS f
        LEFT JOIN "user" u ON u.id = f.actor_id
        ORDER BY f.occurred_at DESC, f.id DESC
        LIMIT ?`, params);
      const page = deps.cursors.page(rows, query.limit, ORDERING, (row): Position => [new Date(row.occurred_at).toISOString(), row.id]);
      return { ...page, items: page.items.map(view) };
    },
  };
}

export type ActivityService = ReturnType<typeof createActivityService>;

function view(row: Row): ActivityBody {
  const name = row.resource_name;
  return {
    id: row.id,
    type: row.type,
    category: row.category,
    summary: summaryOf(row),
    actor: row.actor_id === null ? null : {
      kind: row.actor_id.startsWith('system:') ? 'system' : 'user', id: row.actor_id, email: row.actor_email ?? null,
    },
    resource: { type: row.resource_type, id: row.resource_id, name },
    occurredAt: new Date(row.occurred_at).toISOString(),
  };
}

const DEPLOYMENT_EDGES: Readonly<Record<string, string>> = {
  created: 'was created', running: 'is running', failed: 'failed', scaled: 'was scaled', recovered: 'recovered', stopped: 'was stopped', deleted: 'was deleted',
  capacity_requested: 'needs more GPUs',
};
/** What an actor (a user, or Kiln itself) did to a deployment, by the audited action's type. */
const DEPLOYMENT_ACTIONS: Readonly<Record<string, string>> = {
  'deployment.stop': 'stopped', 'deployment.start': 'started', 'deployment.restart': 'restarted', 'deployment.scale': 'scaled',
  'deployment.update': 'updated the configuration of', 'deployment.optimize': 'optimized',
};
const replicaCount = (value: unknown) => (typeof value === 'number' ? value : undefined);

const cents = (value: unknown) => `$${(Number(value) / 100).toFixed(2)}`;

/** One line a person reads; the record's own fields stay in `type` and `resource`. */
function summaryOf(row: Row): string {
  const d = row.details ?? {};
  const name = row.resource_name ?? row.resource_id;
  const [, verb = row.type] = row.type.split('.');
  switch (row.category) {
    case 'deployments': {
      // An audited action has its actor; a lifecycle edge has none.
      if (row.actor_id !== null) {
        const who = row.actor_id.startsWith('system:') ? row.actor_id : row.actor_email ?? row.actor_id;
        const done = DEPLOYMENT_ACTIONS[row.type] ?? `ran ${row.type} on`;
        const to = row.type === 'deployment.scale' && replicaCount(d.replicas) !== undefined ? ` to ${d.replicas} replica(s)` : '';
        const fields = row.type === 'deployment.update' && Array.isArray(d.fields) && d.fields.length ? ` (${d.fields.join(', ')})` : '';
        return `${who} ${done} deployment ${name}${to}${fields}${typeof d.reason === 'string' ? ` (${d.reason})` : ''}`;
      }
      const what = DEPLOYMENT_EDGES[verb] ?? `is ${verb}`;
      const [from, to] = [replicaCount(d.previousReplicas), replicaCount(d.replicas)];
      const replicas = verb !== 'scaled' || to === undefined ? '' : from === undefined ? ` to ${to} replica(s)` : ` from ${from} to ${to} replica(s)`;
      return `Deployment ${name} ${what}${replicas}${typeof d.reason === 'string' ? `: ${d.reason}` : ''}`;
    }
    case 'members':
      if (row.type === 'member.joined') return `${name} joined as ${String(d.role)}`;
      if (row.type === 'member.invited') return `${name} was invited as ${String(d.role)}`;
      return `The invitation of ${name} was ${row.type.replace('member.invitation_', '')}`;
    case 'keys':
      return `API key ${name} (${String(d.prefix)}...) was ${verb}`;
    case 'alerts':
      return `Alert ${name} ${verb === 'firing' ? 'is firing' : 'was resolved'}${typeof d.message === 'string' && d.message ? `: ${d.message}` : ''}`;
    case 'billing':
      if (row.type === 'invoice.issued') return `${name} was issued: ${cents(d.totalCents)} ${String(d.currency).toUpperCase()}`;
      if (row.type.startsWith('credits.') && 'amountCents' in d) return `Credits ${verb.replace('_', '-')}: ${cents(d.amountCents)}, balance ${cents(d.balanceAfterCents)}`;
      return typeof d.message === 'string' ? d.message : row.type;
  }
}
