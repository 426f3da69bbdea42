import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/**
 * `alert.firing` or `alert.resolved` of one alert, with the payload its webhooks carry; unique per (alert,
 * type): each firing and resolution is recorded once. The evaluation workflow starts the deliveries of the
 * events not dispatched yet (workflows/alerts/), through Kiln's webhook deliveries.
 */
export const AlertEventSchema = defineEntity({
  name: 'AlertEvent',
  extends: BaseSchema,
  uniques: [{ properties: ['alertId', 'type'] }],
  properties: {
    organizationId: p.string(),
    alertId: p.string(),
    type: p.string(),
    payload: p.json<Record<string, unknown>>(),
    /** When its deliveries were started (or skipped: the alert was silenced); null until then. */
    dispatchedAt: p.datetime(3).nullable(),
  },
});

export type AlertEvent = InferEntity<typeof AlertEventSchema>;
