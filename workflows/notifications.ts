// In-app notifications the worker writes (user-notification.entity.ts), inside the caller's transaction, so a
// notification exists exactly when the record it tells of does. The worker may import entities only, so this
// is SQL beside them rather than the API's notifications service; the same rule holds: a member who turned
// the kind off in the app (notification_preference.in_app) gets none, and one who asked for it by e-mail
// (notification_preference.email) is owed a copy in the outbox the API's replicas send from (the worker has no
// mailer: control-plane/notifications/mail-outbox.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { UserNotificationKind, UserNotificationPayloads } from '../control-plane/notifications/user-notification.entity.ts';

/** The built-in roles (core/permissions.ts ROLES, which the worker may not import). */
export type MemberRole = 'owner' | 'admin' | 'member' | 'viewer';

/** Who the worker's notices go to: Kiln records no deployment's creator, and these roles hold billing:read. */
export const OWNERS_AND_ADMINS: readonly MemberRole[] = ['owner', 'admin'];

/**
 * One notification of `kind` to each member of the organization holding one of `roles` (built-in roles: a
 * custom role's permissions are not read here), but those who turned the kind off, and an e-mail copy owed to
 * those who asked for it. Answers how many in-app notifications were written.
 */
export async function notifyMembers<K extends UserNotificationKind>(em: EntityManager, organizationId: string, roles: readonly MemberRole[],
  kind: K, payload: UserNotificationPayloads[K]): Promise<number> {
  const rows = await em.execute<Array<{ id: string }>>(
    `INSERT INTO user_notification (id, created_at, user_id, organization_id, kind, payload)
     SELECT 'unt_' || substr(md5(random()::text || m.user_id), 1, 20), now(), m.user_id, m.organization_id, ?, ?::jsonb
     FROM membership m
     WHERE m.organization_id = ? AND m.role IN (${roles.map(() => '?').join(', ')})
       AND NOT EXISTS (SELECT 1 FROM notification_preference p
                       WHERE p.user_id = m.user_id AND p.organization_id = m.organization_id AND p.in_app ->> ? = 'false')
     RETURNING id`,
    [kind, JSON.stringify(payload), organizationId, ...roles, kind]);
  await em.execute(
    `INSERT INTO notification_mail (id, created_at, user_id, organization_id, kind, payload)
     SELECT 'nml_' || substr(md5(random()::text || m.user_id), 1, 20), now(), m.user_id, m.organization_id, ?, ?::jsonb
     FROM membership m
     JOIN notification_preference p ON p.user_id = m.user_id AND p.organization_id = m.organization_id
     WHERE m.organization_id = ? AND m.role IN (${roles.map(() => '?').join(', ')}) AND p.email ->> ? = 'true'`,
    [kind, JSON.stringify(payload), organizationId, ...roles, kind]);
  return rows.length;
}
