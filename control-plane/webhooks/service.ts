// Webhook subscriptions of an organization. The signing secret is sealed at rest and shown once; in
// production a URL that resolves to a loopback, private or link-local address is refused (SSRF).
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { assertPublicUrl, PrivateUrlError } from '../../lib/network-guard.ts';
import type { Principal } from '../auth/principal.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { newId } from '../../lib/ids.ts';
import { ForbiddenError, NotFoundError, invalidField } from '../core/errors.ts';
import { WebhookAttemptSchema } from './webhook-attempt.entity.ts';
import { WebhookSubscriptionSchema, type WebhookSubscription } from './webhook-subscription.entity.ts';
import { CLUSTER_EVENTS, type CreateWebhookInput, type WebhookViewBody } from './schemas.ts';

export interface WebhookServiceDeps {
  secrets: SecretBox;
  allowPrivateUrls: boolean;
}

export function createWebhookService(deps: WebhookServiceDeps) {
  async function find(em: EntityManager, principal: Principal, id: string, only?: readonly string[]): Promise<WebhookSubscription> {
    const subscription = await em.findOne(WebhookSubscriptionSchema, { id, organization: principal.organizationId, deletedAt: null });
    if (!subscription || (only && !subscription.events.some((e) => only.includes(e)))) throw new NotFoundError(`Webhook subscription ${id} not found`);
    return subscription;
  }

  /** In production a URL that resolves to a loopback, private or link-local address is 422 (SSRF). */
  async function assertAllowedUrl(url: string): Promise<void> {
    if (deps.allowPrivateUrls) return;
    await assertPublicUrl(url).catch((error: unknown) => {
      const message = error instanceof PrivateUrlError ? error.message : `${new URL(url).hostname} does not resolve`;
      throw invalidField('url', message);
    });
  }

  /** The clusters' capacity events are the platform's: 403 for a caller who is not its administrator. */
  function assertMayReceive(principal: Principal, events: readonly string[]): void {
    const platformEvents = events.filter((e) => (CLUSTER_EVENTS as readonly string[]).includes(e));
    if (platformEvents.length && !principal.platformAdmin) throw new ForbiddenError(`Only a platform administrator may subscribe to ${platformEvents.join(', ')}`);
  }

  return {
    async create(em: EntityManager, principal: Principal, input: CreateWebhookInput) {
      assertMayReceive(principal, input.events);
      await assertAllowedUrl(input.url);
      const secret = input.secret ?? `whsec_${randomBytes(32).toString('base64')}`;
      const subscription = em.create(WebhookSubscriptionSchema, {
        id: newId('whs'), organization: principal.organizationId, url: input.url, events: [...new Set(input.events)],
        sealedSecret: deps.secrets.seal(secret), createdAt: new Date(),
      });
      await em.flush();
      return { ...view(subscription), secret };
    },

    /** `only`: the subscriptions wanting one of these events (the alert channels of /v1/monitoring/webhooks). */
    async list(em: EntityManager, principal: Principal, only?: readonly string[]) {
      const subscriptions = await em.find(WebhookSubscriptionSchema, { organization: principal.organizationId, deletedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      return subscriptions.filter((s) => !only || s.events.some((e) => only.includes(e))).map(view);
    },

    /** A new URL or event list (the secret stays); `only` as for list: a subscription outside it is not found. */
    async update(em: EntityManager, principal: Principal, id: string, input: Partial<Pick<CreateWebhookInput, 'url' | 'events'>>, only?: readonly string[]) {
      const subscription = await find(em, principal, id, only);
      if (input.events !== undefined) assertMayReceive(principal, input.events);
      if (input.url !== undefined) {
        await assertAllowedUrl(input.url);
        subscription.url = input.url;
      }
      if (input.events !== undefined) subscription.events = [...new Set(input.events)];
      await em.flush();
      return view(subscription);
    },

    async remove(em: EntityManager, principal: Principal, id: string, only?: readonly string[]) {
      const subscription = await find(em, principal, id, only);
      subscription.deletedAt = new Date();
      await em.flush();
      return { id, deleted: true as const };
    },

    async attempts(em: EntityManager, principal: Principal, id: string) {
      await find(em, principal, id);
      const attempts = await em.find(WebhookAttemptSchema, { subscriptionId: id }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 100 });
      return attempts.map((a) => ({
        id: a.id, deliveryId: a.deliveryId, eventId: a.eventId, attempt: a.attempt, statusCode: a.statusCode ?? null,
        error: a.error ?? null, durationMs: a.durationMs, createdAt: a.createdAt.toISOString(),
      }));
    },
  };
}

function view(s: WebhookSubscription): WebhookViewBody {
  return { id: s.id, url: s.url, events: s.events as WebhookViewBody['events'], createdAt: s.createdAt.toISOString() };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
