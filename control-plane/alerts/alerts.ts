// Alerts of an organization: firing and recent ones, raised by hand, acknowledged, silenced, resolved. A
// rule's alerts are recorded by the evaluation workflow (workflows/alerts/); each firing and resolution
// writes its event once, which that workflow hands to the webhook deliveries.
import type { EntityManager } from '@mikro-orm/postgresql';
import { alertPayload, type AlertEventType } from '../../lib/alerts/events.ts';
import { newId } from '../../lib/ids.ts';
import type { Principal } from '../auth/principal.ts';
import { NotFoundError, invalidField } from '../core/errors.ts';
import { AlertEventSchema } from './alert-event.entity.ts';
import { AlertRuleSchema } from './alert-rule.entity.ts';
import { AlertSchema, type Alert } from './alert.entity.ts';
import type { RaiseAlertInput, UpdateAlertInput } from './schemas.ts';

/** Resolved alerts listed beside the firing ones: those of the last week. */
const RECENT_MS = 7 * 24 * 3_600_000;

export function alertView(a: Alert) {
  const n = (v: number | null | undefined) => (v === null || v === undefined ? null : Number(v));
  return {
    id: a.id, ruleId: a.ruleId ?? null, name: a.name, metric: a.metric, message: a.message, state: a.state, value: n(a.value), threshold: n(a.threshold),
    startedAt: a.startedAt.toISOString(), firedAt: a.firedAt.toISOString(), resolvedAt: a.resolvedAt?.toISOString() ?? null,
    acknowledgedAt: a.acknowledgedAt?.toISOString() ?? null, acknowledgedBy: a.acknowledgedBy ?? null, silencedUntil: a.silencedUntil?.toISOString() ?? null,
  };
}

/** Records an edge's event once (a second write of the same alert and type is ignored). */
export async function recordAlertEvent(em: EntityManager, alert: Alert, type: AlertEventType, at: Date): Promise<void> {
  await em.upsert(AlertEventSchema, {
    id: newId('ale'), organizationId: alert.organizationId, alertId: alert.id, type, payload: alertPayload(type, { ...alert, ruleId: alert.ruleId ?? null, value: alert.value ?? null, threshold: alert.threshold ?? null, resolvedAt: alert.resolvedAt ?? null }, at),
    dispatchedAt: null, createdAt: at,
  }, { onConflictAction: 'ignore', onConflictFields: ['alertId', 'type'], disableIdentityMap: true });
}

/** Resolves the rule's open alert (a rule deleted or changed stops watching), recording the resolution. */
export async function resolveOpenAlerts(em: EntityManager, organizationId: string, ruleId: string, at: Date): Promise<void> {
  for (const alert of await em.find(AlertSchema, { organizationId, ruleId, state: 'firing' })) {
    Object.assign(alert, { state: 'resolved', resolvedAt: at });
    await recordAlertEvent(em, alert, 'alert.resolved', at);
  }
}

export function createAlertService() {
  async function find(em: EntityManager, principal: Principal, id: string): Promise<Alert> {
    const alert = await em.findOne(AlertSchema, { id, organizationId: principal.organizationId });
    if (!alert) throw new NotFoundError(`Alert ${id} not found`);
    return alert;
  }

  return {
    /** Firing alerts, and those resolved in the last week, newest first (at most 100 of them). */
    async list(em: EntityManager, principal: Principal, state: 'firing' | 'resolved' | undefined) {
      const recent = { $or: [{ state: 'firing' as const }, { resolvedAt: { $gte: new Date(Date.now() - RECENT_MS) } }] };
      const alerts = await em.find(AlertSchema, { organizationId: principal.organizationId, ...(state ? { state } : {}), ...recent }, { orderBy: { firedAt: 'desc', id: 'desc' }, limit: 100 });
      return alerts.map(alertView);
    },

    async raise(em: EntityManager, principal: Principal, input: RaiseAlertInput) {
      const now = new Date();
      const alert = em.create(AlertSchema, {
        id: newId('alt'), organizationId: principal.organizationId, ruleId: null, sequence: 0, name: input.name, metric: 'manual',
        message: input.message ?? input.name, state: 'firing', value: null, threshold: null, startedAt: now, firedAt: now,
        resolvedAt: null, acknowledgedAt: null, acknowledgedBy: null, silencedUntil: null,
      });
      await em.flush();
      await recordAlertEvent(em, alert, 'alert.firing', now);
      return alertView(alert);
    },

    async update(em: EntityManager, principal: Principal, input: UpdateAlertInput) {
      const alert = await find(em, principal, input.id);
      const now = new Date();
      switch (input.action) {
        case 'acknowledge':
          alert.acknowledgedAt ??= now;
          alert.acknowledgedBy ??= principal.userId;
          break;
        case 'silence': {
          if (input.until === undefined) throw invalidField('until', 'required to silence: until when');
          const until = new Date(input.until);
          if (until <= now) throw invalidField('until', 'must be in the future');
          alert.silencedUntil = until;
          if (alert.ruleId) await em.nativeUpdate(AlertRuleSchema, { id: alert.ruleId, organization: principal.organizationId }, { silencedUntil: until });
          break;
        }
        case 'unsilence':
          alert.silencedUntil = null;
          if (alert.ruleId) await em.nativeUpdate(AlertRuleSchema, { id: alert.ruleId, organization: principal.organizationId }, { silencedUntil: null });
          break;
        case 'resolve':
          if (alert.ruleId) throw invalidField('action', 'a rule\'s alert resolves when its condition stops holding');
          if (alert.state === 'firing') {
            Object.assign(alert, { state: 'resolved', resolvedAt: now });
            await recordAlertEvent(em, alert, 'alert.resolved', now);
          }
          break;
      }
      await em.flush();
      return alertView(alert);
    },
  };
}

export type AlertService = ReturnType<typeof createAlertService>;
