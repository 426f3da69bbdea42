// Alert delivery channels (/v1/monitoring/webhooks): webhook subscriptions to alert events, kept by the
// webhooks area (signed, retried deliveries; the SSRF guard on their URLs). Only subscriptions wanting an
// alert event are channels: another subscription's id is not found here.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ALERT_EVENTS } from '../../lib/alerts/events.ts';
import type { Principal } from '../auth/principal.ts';
import type { WebhookService } from '../webhooks/service.ts';
import type { z } from 'zod';
import type { CreateAlertChannelRequest, UpdateAlertChannelRequest } from './schemas.ts';

export function createAlertChannelService(webhooks: WebhookService) {
  return {
    create: (em: EntityManager, principal: Principal, input: z.infer<typeof CreateAlertChannelRequest>) =>
      webhooks.create(em, principal, { url: input.url, events: input.events ?? [...ALERT_EVENTS], secret: input.secret }),
    list: (em: EntityManager, principal: Principal) => webhooks.list(em, principal, ALERT_EVENTS),
    update: (em: EntityManager, principal: Principal, input: z.infer<typeof UpdateAlertChannelRequest>) =>
      webhooks.update(em, principal, input.id, { url: input.url, events: input.events }, ALERT_EVENTS),
    remove: (em: EntityManager, principal: Principal, id: string) => webhooks.remove(em, principal, id, ALERT_EVENTS),
  };
}

export type AlertChannelService = ReturnType<typeof createAlertChannelService>;
