// The kiln-webhooks task queue: one workflow per delivery of an event to a subscriber, signed and retried.
import { deriveKey } from '../../lib/keys.ts';
import { createSecretBox } from '../../lib/secret-box.ts';
import { WEBHOOKS_TASK_QUEUE } from '../contract/webhooks.ts';
import type { QueueModule, WorkerDeps } from '../queue.ts';
import { createWebhookActivities } from './activities.ts';
import { webhookStore } from './store.ts';

export const webhooksQueue = {
  taskQueue: WEBHOOKS_TASK_QUEUE,
  workflowsPath: new URL('./workflow.ts', import.meta.url).pathname,
  activities: ({ orm, signingKey, allowPrivateWebhookUrls }: Pick<WorkerDeps, 'orm' | 'signingKey' | 'allowPrivateWebhookUrls'>) => createWebhookActivities({
    ...webhookStore(orm, createSecretBox(deriveKey(signingKey, 'webhook-secrets'))),
    allowPrivateUrls: allowPrivateWebhookUrls,
  }),
} satisfies QueueModule;
