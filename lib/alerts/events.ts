// The webhook payload of an alert's firing or resolution (`alert.firing`, `alert.resolved`), in the shape of
// deployment events (event, timestamp, data): written once by whoever records the edge (the evaluation
// workflow, or the API for an alert raised or resolved by hand), delivered by Kiln's webhook deliveries.
import type { AlertWebhookPayload } from '../webhook-payloads.ts';

export const ALERT_EVENTS = ['alert.firing', 'alert.resolved'] as const;
export type AlertEventType = (typeof ALERT_EVENTS)[number];

export interface AlertFacts {
  readonly id: string;
  readonly ruleId: string | null;
  readonly name: string;
  readonly metric: string;
  readonly message: string;
  readonly value: number | null;
  readonly threshold: number | null;
  readonly firedAt: Date;
  readonly resolvedAt: Date | null;
}

export function alertPayload(type: AlertEventType, alert: AlertFacts, at: Date): AlertWebhookPayload {
  return {
    event: type,
    timestamp: at.toISOString(),
    data: {
      id: alert.id, ruleId: alert.ruleId, name: alert.name, metric: alert.metric, message: alert.message,
      state: type === 'alert.firing' ? 'firing' : 'resolved', value: alert.value, threshold: alert.threshold,
      firedAt: alert.firedAt.toISOString(), resolvedAt: alert.resolvedAt?.toISOString() ?? null,
    },
  };
}
