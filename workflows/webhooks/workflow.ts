// Delivers one event to one subscriber, at least once: Temporal retries the send with exponential backoff
// (1 s doubling up to 1 h, for up to 3 days); a receiver that refuses the request for good (a 4xx other than
// 408 and 429) ends it early. Every attempt is recorded by the activity.
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { WebhookDeliveryInput, WebhookDeliveryResult } from '../contract/webhooks.ts';
import type { WebhookActivities } from './activities.ts';

const { sendWebhook } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '3 days',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 hour', nonRetryableErrorTypes: ['ReceiverRefused', 'SubscriptionGone', 'UrlNotAllowed'] },
});

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  try {
    const { attempt } = await sendWebhook(input);
    return { delivered: true, attempts: attempt };
  } catch (error) {
    const cause = error instanceof ActivityFailure ? error.cause : error;
    const details = cause instanceof ApplicationFailure ? (cause.details?.[0] as { attempt?: number } | undefined) : undefined;
    return { delivered: false, attempts: details?.attempt ?? 0, lastError: cause instanceof Error ? cause.message : String(cause) };
  }
}
