// Webhook subscriptions; deliveries run in workflows/webhooks.
import { createSecretBox } from '../../lib/secret-box.ts';
import { defineModule } from '../module.ts';
import { webhookRoutes } from './routes.ts';
import { createWebhookService } from './service.ts';
import { WebhookAttemptSchema } from './webhook-attempt.entity.ts';
import { WebhookSubscriptionSchema } from './webhook-subscription.entity.ts';

export const webhooksModule = defineModule({
  name: 'webhooks',
  entities: [WebhookSubscriptionSchema, WebhookAttemptSchema],
  routes: ({ key, config }) => webhookRoutes(createWebhookService({
    secrets: createSecretBox(key('webhook-secrets')),
    allowPrivateUrls: config.env !== 'production',
  })),
});
