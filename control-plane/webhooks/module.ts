// Webhook subscriptions; deliveries run in workflows/webhooks.
import { createSecretBox } from '../../lib/secret-box.ts';
import { defineModule } from '../module.ts';
import { webhookRoutes } from './routes.ts';
import { createWebhookService, type WebhookService } from './service.ts';

declare module '../module.ts' {
  interface Services {
    /** Subscriptions: /api/webhooks, and the alert channels of /v1/monitoring/webhooks (alerts/). */
    webhooks: WebhookService;
  }
}

export const webhooksModule = defineModule({
  name: 'webhooks',
  services: ({ key, config }) => ({
    webhooks: createWebhookService({ secrets: createSecretBox(key('webhook-secrets')), allowPrivateUrls: config.env !== 'production' }),
  }),
  routes: ({ services }) => webhookRoutes(services.webhooks),
});
