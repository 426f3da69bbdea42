// Platform notifications as administrators manage them (/v1/admin/notifications).
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../lib/ids.ts';
import { NotFoundError, ValidationError, invalidField } from '../core/errors.ts';
import type { CursorCodec } from '../core/pagination.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { NotificationSchema, type Notification } from './notification.entity.ts';
import type { CreateNotificationInput, ListNotificationsInput, NotificationViewBody, UpdateNotificationInput } from './schemas.ts';

const ORDERING = 'notifications:-created_at,-id';

export function createNotificationService(deps: { cursors: CursorCodec }) {
  async function find(em: EntityManager, id: string): Promise<Notification> {
    const notification = await em.findOne(NotificationSchema, { id });
    if (!notification) throw new NotFoundError(`Notification ${id} not found`);
    return notification;
  }

  /** An audience must name organizations that exist. */
  async function assertOrganizations(em: EntityManager, ids: string[] | undefined): Promise<void> {
    if (!ids?.length) return;
    const known = new Set((await em.find(OrganizationSchema, { id: { $in: ids } }, { fields: ['id'] })).map((o) => o.id));
    const fields = ids.flatMap((id, i) => known.has(id) ? [] : [{ field: `audience.organizationIds.${i}`, message: 'no such organization' }]);
    if (fields.length) throw new ValidationError(`Invalid field ${fields[0]!.field}: no such organization`, { fields });
  }

  return {
    /** Newest first, in cursor pages. */
    async list(em: EntityManager, query: ListNotificationsInput) {
      const where = query.cursor ? (() => {
        const [createdAt, id] = JSON.parse(deps.cursors.decode(query.cursor, ORDERING)) as [string, string];
        const at = new Date(createdAt);
        return { $or: [{ createdAt: { $lt: at } }, { createdAt: at, id: { $lt: id } }] };
      })() : {};
      const rows = await em.find(NotificationSchema, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: query.limit + 1 });
      return deps.cursors.page(rows.map(view), query.limit, ORDERING, (n) => [n.createdAt, n.id]);
    },

    async create(em: EntityManager, input: CreateNotificationInput): Promise<NotificationViewBody> {
      await assertOrganizations(em, input.audience?.organizationIds);
      const notification = em.create(NotificationSchema, {
        id: newId('ntf'), title: input.title, message: input.message, severity: input.severity,
        organizationIds: input.audience?.organizationIds ?? null,
        startsAt: input.startsAt ? new Date(input.startsAt) : null,
        endsAt: input.endsAt ? new Date(input.endsAt) : null,
      });
      await em.flush();
      return view(notification);
    },

    async update(em: EntityManager, id: string, input: UpdateNotificationInput): Promise<NotificationViewBody> {
      const notification = await find(em, id);
      if (input.audience !== undefined) await assertOrganizations(em, input.audience?.organizationIds);
      const date = (value: string | null | undefined, stored: Date | null | undefined): Date | null =>
        value === undefined ? stored ?? null : value === null ? null : new Date(value);
      const startsAt = date(input.startsAt, notification.startsAt);
      const endsAt = date(input.endsAt, notification.endsAt);
      if (startsAt && endsAt && endsAt <= startsAt) {
        const field = input.endsAt !== undefined ? 'endsAt' : 'startsAt';
        const message = field === 'endsAt' ? 'must be after startsAt' : 'must be before endsAt';
        throw invalidField(field, message);
      }
      if (input.title !== undefined) notification.title = input.title;
      if (input.message !== undefined) notification.message = input.message;
      if (input.severity !== undefined) notification.severity = input.severity;
      if (input.audience !== undefined) notification.organizationIds = input.audience?.organizationIds ?? null;
      notification.startsAt = startsAt;
      notification.endsAt = endsAt;
      await em.flush();
      return view(notification);
    },

    async remove(em: EntityManager, id: string): Promise<{ id: string; deleted: true }> {
      em.remove(await find(em, id));
      await em.flush();
      return { id, deleted: true };
    },
  };
}

function view(n: Notification): NotificationViewBody {
  return {
    id: n.id, title: n.title, message: n.message, severity: n.severity,
    audience: n.organizationIds ? { organizationIds: n.organizationIds } : null,
    startsAt: n.startsAt?.toISOString() ?? null, endsAt: n.endsAt?.toISOString() ?? null,
    createdAt: n.createdAt.toISOString(), updatedAt: n.updatedAt.toISOString(),
  };
}

export type NotificationService = ReturnType<typeof createNotificationService>;
