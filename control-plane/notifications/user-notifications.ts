// Notifications addressed to one user in one organization (user-notification.entity.ts): areas create them
// for what their users follow (template updates now), and read and mark them for their own routes.
// /v1/notifications (inbox.ts) lists them all.
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomString } from '../../lib/ids.ts';
import { NotificationMailSchema } from './notification-mail.entity.ts';
import { NotificationPreferenceSchema } from './notification-state.entity.ts';
import { UserNotificationSchema, type UserNotification, type UserNotificationKind, type UserNotificationPayloads } from './user-notification.entity.ts';

export interface Recipient { userId: string; organizationId: string }

/** At most this many unread notifications of one kind are answered at once (the newest). */
export const UNREAD_LIMIT = 100;

export function createUserNotificationService() {
  return {
    /**
     * One notification per recipient, but those who turned the kind off in the app (their preferences in that
     * organization), flushed with the caller's unit of work; and an e-mail copy owed to those who asked for one
     * (sent by mail-outbox.ts once the unit of work commits).
     */
    async notify<K extends UserNotificationKind>(em: EntityManager, recipients: readonly Recipient[], kind: K, payload: UserNotificationPayloads[K]): Promise<void> {
      const preferences = recipients.length ? await em.find(NotificationPreferenceSchema, {
        $or: recipients.map((r) => ({ user: r.userId, organization: r.organizationId })),
      }) : [];
      const key = (userId: string, organizationId: string) => `${userId} ${organizationId}`;
      const declined = new Set(preferences.filter((p) => p.inApp[kind] === false).map((p) => key(p.user.id, p.organization.id)));
      for (const { userId, organizationId } of recipients) {
        if (declined.has(key(userId, organizationId))) continue;
        em.create(UserNotificationSchema, { id: `unt_${randomString(20)}`, user: userId, organization: organizationId, kind, payload, readAt: null });
      }
      for (const preference of preferences.filter((p) => p.email[kind] === true)) {
        em.create(NotificationMailSchema, { id: `nml_${randomString(20)}`, user: preference.user.id, organization: preference.organization.id, kind, payload, sentAt: null, lastError: null });
      }
    },

    /** The recipient's unread notifications of `kind`, newest first. */
    async unread<K extends UserNotificationKind>(em: EntityManager, recipient: Recipient, kind: K): Promise<Array<UserNotification & { payload: UserNotificationPayloads[K] }>> {
      // The kind selects the payload's shape (user-notification.entity.ts).
      return em.find(UserNotificationSchema, { user: recipient.userId, organization: recipient.organizationId, kind, readAt: null },
        { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: UNREAD_LIMIT }) as Promise<Array<UserNotification & { payload: UserNotificationPayloads[K] }>>;
    },

    /**
     * Marks the recipient's notifications of `kind` read: those with the given ids (read ones stay as they
     * were, so a retry changes nothing), or all. When some given id is none of the recipient's notifications
     * of that kind, nothing is marked and those ids are answered, so the caller can name them.
     */
    async markRead(em: EntityManager, recipient: Recipient, kind: UserNotificationKind, ids: readonly string[] | 'all'): Promise<string[]> {
      const where = { user: recipient.userId, organization: recipient.organizationId, kind, ...(ids === 'all' ? { readAt: null } : { id: { $in: [...ids] } }) };
      const found = await em.find(UserNotificationSchema, where);
      const known = new Set(found.map((n) => n.id));
      const unknown = ids === 'all' ? [] : ids.filter((id) => !known.has(id));
      if (unknown.length) return unknown;
      const at = new Date();
      for (const notification of found) notification.readAt ??= at;
      await em.flush();
      return [];
    },
  };
}

export type UserNotificationService = ReturnType<typeof createUserNotificationService>;
