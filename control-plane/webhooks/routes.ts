// /api/webhooks: subscribe a URL to deployment events (the secret is shown once), list, delete, and read
// the delivery attempts of one subscription.
import { z } from 'zod';
import { defineRoute, type Route } from '../http/routes.ts';
import type { WebhookService } from './service.ts';
import { CreateWebhookRequest, DeletedWebhook, WebhookAttemptView, WebhookIdParams, WebhookView, WebhookWithSecret } from './schemas.ts';

const common = { tag: 'Webhooks', resourceType: 'webhook_subscription' } as const;

export function webhookRoutes(webhooks: WebhookService): Route[] {
  return [
    defineRoute({
      ...common, permission: 'webhooks:write', method: 'POST', path: '/api/webhooks', operationId: 'createWebhook', summary: 'Subscribe a URL to deployment events',
      body: CreateWebhookRequest, response: WebhookWithSecret, successStatus: 201, idempotent: true, errors: [403, 422],
      handle: async ({ body, state }) => ({ data: await webhooks.create(state.em, state.principal!, body) }),
    }),
    defineRoute({
      ...common, permission: 'webhooks:read', method: 'GET', path: '/api/webhooks', operationId: 'listWebhooks', summary: 'List webhook subscriptions (never their secrets)',
      response: z.array(WebhookView),
      handle: async ({ state }) => ({ data: await webhooks.list(state.em, state.principal!) }),
    }),
    defineRoute({
      ...common, permission: 'webhooks:write', method: 'DELETE', path: '/api/webhooks/{id}', operationId: 'deleteWebhook', summary: 'Delete a webhook subscription',
      params: WebhookIdParams, response: DeletedWebhook, errors: [404],
      async handle({ params, state }) {
        state.resourceId = params.id;
        return { data: await webhooks.remove(state.em, state.principal!, params.id) };
      },
    }),
    defineRoute({
      ...common, permission: 'webhooks:read', method: 'GET', path: '/api/webhooks/{id}/attempts', operationId: 'listWebhookAttempts', summary: 'The latest 100 delivery attempts of a subscription',
      params: WebhookIdParams, response: z.array(WebhookAttemptView), errors: [404],
      handle: async ({ params, state }) => ({ data: await webhooks.attempts(state.em, state.principal!, params.id) }),
    }),
  ];
}
