// What webhook delivery reads and writes in PostgreSQL: subscriptions (secret unsealed only here, at send
// time), event payloads, attempts; and the start of one delivery workflow per matching subscription.
import type { MikroORM } from '@mikro-orm/postgresql';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { SecretBox } from '../../lib/secret-box.ts';
import { newId } from '../../lib/ids.ts';
import { AlertEventSchema } from '../../control-plane/alerts/alert-event.entity.ts';
import { ClusterEventSchema } from '../../control-plane/clusters/cluster-event.entity.ts';
import { DeploymentEventSchema, type DeploymentEvent } from '../../control-plane/deployments/deployment-event.entity.ts';
import { WebhookAttemptSchema } from '../../control-plane/webhooks/webhook-attempt.entity.ts';
import { WebhookSubscriptionSchema } from '../../control-plane/webhooks/webhook-subscription.entity.ts';
import { WEBHOOK_DELIVERY_WORKFLOW, WEBHOOKS_TASK_QUEUE } from '../contract/webhooks.ts';
import type { WebhookActivityDeps } from './activities.ts';

export function webhookStore(orm: MikroORM, secrets: SecretBox): Pick<WebhookActivityDeps, 'subscriptions' | 'events' | 'attempts'> {
  return {
    subscriptions: {
      async find(id) {
        const s = await orm.em.fork().findOne(WebhookSubscriptionSchema, { id, deletedAt: null });
        return s ? { url: s.url, secret: secrets.open(s.sealedSecret) } : undefined;
      },
    },
    events: {
      // Deployments' lifecycle events (evt_), alerts' firings and resolutions (ale_, workflows/alerts/), and
      // clusters' capacity decisions (cev_, workflows/cluster/).
      payload: async (id) => id.startsWith('ale_')
        ? (await orm.em.fork().findOneOrFail(AlertEventSchema, { id })).payload
        : id.startsWith('cev_')
          ? (await orm.em.fork().findOneOrFail(ClusterEventSchema, { id })).payload
          : (await orm.em.fork().findOneOrFail(DeploymentEventSchema, { id })).payload,
    },
    attempts: {
      async record(a) {
        await orm.em.fork().insert(WebhookAttemptSchema, {
          id: newId('wha'), subscriptionId: a.subscriptionId, deliveryId: a.deliveryId, eventId: a.eventId, attempt: a.attempt,
          statusCode: a.statusCode ?? null, error: a.error ?? null, durationMs: a.durationMs, createdAt: new Date(),
        });
      },
    },
  };
}

/**
 * Starts the delivery of an event to every subscription that wants it; starting twice is harmless. An
 * organization's event (organizationId) goes to its subscriptions; a platform event (organizationId null, a
 * cluster's) to every subscription asking for it, which only platform administrators may make.
 */
export function webhookDeliveries(orm: MikroORM, client: Client) {
  return {
    async startFor(event: Pick<DeploymentEvent, 'id' | 'type'> & { organizationId: string | null }): Promise<void> {
      const subscriptions = await orm.em.fork().find(WebhookSubscriptionSchema, { ...(event.organizationId === null ? {} : { organization: event.organizationId }), deletedAt: null });
      for (const subscription of subscriptions.filter((s) => s.events.includes(event.type))) {
        const deliveryId = `whd_${event.id}_${subscription.id}`;
        await client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW, {
          workflowId: deliveryId, taskQueue: WEBHOOKS_TASK_QUEUE, args: [{ deliveryId, subscriptionId: subscription.id, eventId: event.id }],
          // Also once the delivery has ended: a retried start never delivers an event twice.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
        }).catch((error: unknown) => {
          if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        });
      }
    },
  };
}
