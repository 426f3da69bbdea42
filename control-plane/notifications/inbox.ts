// A user's own notifications in their organization (/v1/notifications): the user notifications areas and the
// worker write for them (user-notification.entity.ts) and the platform announcements live for the organization
// (notification.entity.ts), read together, unread first then newest first; their reads and the user's
// preferences (notification-state.entity.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomString } from '../../lib/ids.ts';
import type { Principal } from '../auth/principal.ts';
import { invoiceNumber } from '../invoices/service.ts';
import { NotFoundError } from '../core/errors.ts';
import type { CursorCodec } from '../core/pagination.ts';
import type { Severity } from './notification.entity.ts';
import { NotificationPreferenceSchema, type KindSwitches } from './notification-state.entity.ts';
import type { ListMyNotificationsInput, MyNotificationViewBody, NotificationPreferencesBody, NotificationPreferencesInput } from './schemas.ts';
import { NOTIFICATION_KINDS, type NotificationKind, type UserNotificationKind, type UserNotificationPayloads } from './user-notification.entity.ts';

const ORDERING = 'my-notifications:-unread,-created_at,-id';

interface Row {
  id: string; kind: NotificationKind; payload: Record<string, unknown> | null; created_at: Date | string; read_at: Date | string | null;
  title: string | null; message: string | null; severity: Severity | null;
}

/**
 * Every notification the caller may see, as one relation: theirs, and the announcements live now for their
 * organization (each with the caller's read, if any). Parameters: user, organization, user, organization, organization.
 */
const ITEMS = `
  SELECT u.id, u.kind, u.payload, u.created_at, u.read_at, NULL::text AS title, NULL::text AS message, NULL::text AS severity
  FROM user_notification u WHERE u.user_id = ? AND u.organization_id = ?
  UNION ALL
  SELECT n.id, 'platform.announcement', NULL, n.created_at, r.created_at, n.title, n.message, n.severity
  FROM notification n
  LEFT JOIN notification_read r ON r.notification_id = n.id AND r.user_id = ? AND r.organization_id = ?
  WHERE (n.organization_ids IS NULL OR n.organization_ids @> jsonb_build_array(?::text))
    AND (n.starts_at IS NULL OR n.starts_at <= now()) AND (n.ends_at IS NULL OR n.ends_at > now())`;

const itemParams = (p: Principal) => [p.userId, p.organizationId, p.userId, p.organizationId, p.organizationId];

/** Announcements with no read by the caller, live now for their organization (same parameters as ITEMS' second half). */
const UNREAD_ANNOUNCEMENTS = `
  SELECT n.id FROM notification n
  WHERE (n.organization_ids IS NULL OR n.organization_ids @> jsonb_build_array(?::text))
    AND (n.starts_at IS NULL OR n.starts_at <= now()) AND (n.ends_at IS NULL OR n.ends_at > now())
    AND NOT EXISTS (SELECT 1 FROM notification_read r WHERE r.notification_id = n.id AND r.user_id = ? AND r.organization_id = ?)`;

const SEVERITY: Readonly<Record<UserNotificationKind, Severity>> = {
  'template.updated': 'info',
  'credits.low': 'warning',
  'credits.exhausted': 'critical',
  'credits.stopped': 'critical',
  'deployment.failed': 'critical',
  'deployment.running': 'info',
  'alert.fired': 'warning',
  'alert.resolved': 'info',
  'invoice.issued': 'info',
};

/** A title and a sentence for each kind, from its payload (worker-written kinds carry their own message). */
export function describe<K extends UserNotificationKind>(kind: K, payload: UserNotificationPayloads[K]): { title: string; message: string } {
  const p = payload as UserNotificationPayloads[UserNotificationKind];
  const message = 'message' in p && typeof p.message === 'string' ? p.message : '';
  switch (kind) {
    case 'template.updated': {
      const t = payload as UserNotificationPayloads['template.updated'];
      const fields = (t.changes ?? []).map((c) => c.field);
      return {
        title: `Template ${t.templateName} has a new version`,
        message: `Version ${t.version} replaces version ${t.previousVersion}${fields.length ? `; it changes ${fields.join(', ')}` : ''}.`,
      };
    }
    case 'credits.low': return { title: 'Your credits are running low', message };
    case 'credits.exhausted': return { title: 'Your credits ran out', message };
    case 'credits.stopped': return { title: 'Deployments stopped: no credits', message };
    case 'deployment.failed': return { title: `Deployment ${(payload as UserNotificationPayloads['deployment.failed']).deploymentName} failed`, message };
    case 'deployment.running': return { title: `Deployment ${(payload as UserNotificationPayloads['deployment.running']).deploymentName} is running`, message };
    case 'alert.fired': return { title: `Alert fired: ${(payload as UserNotificationPayloads['alert.fired']).name}`, message };
    case 'alert.resolved': return { title: `Alert resolved: ${(payload as UserNotificationPayloads['alert.resolved']).name}`, message };
    case 'invoice.issued': return { title: 'Your monthly invoice is issued', message };
    default: return { title: kind, message };
  }
}

const iso = (at: Date | string) => new Date(at).toISOString();

function view(row: Row, organizationId: string): MyNotificationViewBody {
  const readAt = row.read_at ? iso(row.read_at) : null;
  if (row.kind === 'platform.announcement') {
    return { id: row.id, kind: row.kind, title: row.title!, message: row.message!, severity: row.severity!, data: {}, createdAt: iso(row.created_at), readAt };
  }
  const kind = row.kind;
  const payload = (row.payload ?? {}) as unknown as UserNotificationPayloads[typeof kind];
  const data: Record<string, unknown> = { ...payload };
  // The worker writes the invoice's sequence; the printed number is the invoices area's to make.
  if (kind === 'invoice.issued' && typeof data.sequence === 'number') data.number = invoiceNumber(organizationId, data.sequence);
  return { id: row.id, kind, ...describe(kind, payload), severity: SEVERITY[kind] ?? 'info', data, createdAt: iso(row.created_at), readAt };
}

/** Stored switches over the defaults: every kind in the app, none by e-mail. */
function resolve(stored: KindSwitches | undefined, fallback: boolean): Record<NotificationKind, boolean> {
  return Object.fromEntries(NOTIFICATION_KINDS.map((kind) => [kind, stored?.[kind] ?? fallback])) as Record<NotificationKind, boolean>;
}

export function createInboxService(deps: { cursors: CursorCodec }) {
  async function switchedOff(em: EntityManager, principal: Principal): Promise<NotificationKind[]> {
    const preference = await em.findOne(NotificationPreferenceSchema, { user: principal.userId, organization: principal.organizationId });
    return NOTIFICATION_KINDS.filter((kind) => preference?.inApp[kind] === false);
  }

  async function select(em: EntityManager, principal: Principal, filters: { unread?: boolean; kind?: NotificationKind; id?: string; off?: NotificationKind[] },
    position: [boolean, string, string] | null, limit: number): Promise<Row[]> {
    const where: string[] = [];
    const params: unknown[] = [...itemParams(principal)];
    if (filters.unread !== undefined) where.push(filters.unread ? 'read_at IS NULL' : 'read_at IS NOT NULL');
    if (filters.kind) { where.push('kind = ?'); params.push(filters.kind); }
    if (filters.id) { where.push('id = ?'); params.push(filters.id); }
    if (filters.off?.length) { where.push(`kind NOT IN (${filters.off.map(() => '?').join(', ')})`); params.push(...filters.off); }
    // Every key descends, so "after the cursor" is one row comparison.
    if (position) { where.push('((read_at IS NULL)::int, created_at, id) < (?::int, ?::timestamptz, ?)'); params.push(position[0] ? 1 : 0, position[1], position[2]); }
    params.push(limit);
    return em.execute<Row[]>(`SELECT * FROM (${ITEMS}) items ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY (read_at IS NULL) DESC, created_at DESC, id DESC LIMIT ?`, params);
  }

  return {
    /** Unread first, then newest first, in cursor pages; kinds the user turned off in the app are left out. */
    async list(em: EntityManager, principal: Principal, query: ListMyNotificationsInput) {
      const position = query.cursor ? JSON.parse(deps.cursors.decode(query.cursor, ORDERING)) as [boolean, string, string] : null;
      const rows = await select(em, principal, { unread: query.unread, kind: query.kind, off: await switchedOff(em, principal) }, position, query.limit + 1);
      return deps.cursors.page(rows.map((row) => view(row, principal.organizationId)), query.limit, ORDERING, (n) => [n.readAt === null, n.createdAt, n.id]);
    },

    /** Marks one of the caller's notifications read; one already read keeps its time. Another's or unknown: 404. */
    async markRead(em: EntityManager, principal: Principal, id: string): Promise<MyNotificationViewBody> {
      const [row] = await select(em, principal, { id }, null, 1);
      if (!row) throw new NotFoundError(`Notification ${id} not found`);
      if (!row.read_at) {
        if (row.kind === 'platform.announcement') {
          await em.execute(`INSERT INTO notification_read (id, created_at, user_id, organization_id, notification_id) VALUES (?, now(), ?, ?, ?)
            ON CONFLICT (user_id, organization_id, notification_id) DO NOTHING`, [`ntr_${randomString(20)}`, principal.userId, principal.organizationId, id]);
        } else {
          await em.execute('UPDATE user_notification SET read_at = now() WHERE id = ? AND user_id = ? AND organization_id = ? AND read_at IS NULL',
            [id, principal.userId, principal.organizationId]);
        }
      }
      const [marked] = await select(em, principal, { id }, null, 1);
      return view(marked!, principal.organizationId);
    },

    /** Marks every unread notification of the caller's read; answers how many were unread. */
    async markAllRead(em: EntityManager, principal: Principal): Promise<{ marked: number }> {
      return em.transactional(async (tx) => {
        const own = await tx.execute<Array<{ id: string }>>('UPDATE user_notification SET read_at = now() WHERE user_id = ? AND organization_id = ? AND read_at IS NULL RETURNING id',
          [principal.userId, principal.organizationId]);
        const announcements = await tx.execute<Array<{ id: string }>>(`
          INSERT INTO notification_read (id, created_at, user_id, organization_id, notification_id)
          SELECT 'ntr_' || substr(md5(random()::text || u.id), 1, 20), now(), ?, ?, u.id FROM (${UNREAD_ANNOUNCEMENTS}) u
          ON CONFLICT (user_id, organization_id, notification_id) DO NOTHING RETURNING id`,
        [principal.userId, principal.organizationId, principal.organizationId, principal.userId, principal.organizationId]);
        return { marked: own.length + announcements.length };
      });
    },

    async preferences(em: EntityManager, principal: Principal): Promise<NotificationPreferencesBody> {
      const stored = await em.findOne(NotificationPreferenceSchema, { user: principal.userId, organization: principal.organizationId });
      return { inApp: resolve(stored?.inApp, true), email: resolve(stored?.email, false), updatedAt: stored?.updatedAt.toISOString() ?? null };
    },

    /** Merges the given switches into the stored ones (absent kinds keep theirs); answers every kind's setting. */
    async setPreferences(em: EntityManager, principal: Principal, input: NotificationPreferencesInput): Promise<NotificationPreferencesBody> {
      const defined = (switches: Partial<Record<NotificationKind, boolean | undefined>> | undefined): KindSwitches =>
        Object.fromEntries(Object.entries(switches ?? {}).filter(([, on]) => on !== undefined)) as KindSwitches;
      // One statement: two first settings at once merge instead of one failing on the unique key.
      await em.execute(`
        INSERT INTO notification_preference (id, created_at, user_id, organization_id, in_app, email, updated_at) VALUES (?, now(), ?, ?, ?::jsonb, ?::jsonb, now())
        ON CONFLICT (user_id, organization_id) DO UPDATE SET in_app = notification_preference.in_app || excluded.in_app,
          email = notification_preference.email || excluded.email, updated_at = now()`,
      [`npf_${randomString(20)}`, principal.userId, principal.organizationId, JSON.stringify(defined(input.inApp)), JSON.stringify(defined(input.email))]);
      const stored = await em.findOne(NotificationPreferenceSchema, { user: principal.userId, organization: principal.organizationId }, { refresh: true });
      return { inApp: resolve(stored?.inApp, true), email: resolve(stored?.email, false), updatedAt: stored?.updatedAt.toISOString() ?? null };
    },
  };
}

export type InboxService = ReturnType<typeof createInboxService>;
