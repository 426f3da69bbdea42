// Contract of webhook delivery: one workflow per (event, subscription), id = delivery id, so a delivery is
// started at most once and an SRE finds it by the id the attempts table shows.
export const WEBHOOKS_TASK_QUEUE = 'kiln-webhooks';
export const WEBHOOK_DELIVERY_WORKFLOW = 'webhookDeliveryWorkflow';

/** Ids only: the URL and secret are read by the activity, so no secret ever enters workflow history. */
export interface WebhookDeliveryInput {
  readonly deliveryId: string;
  readonly subscriptionId: string;
  readonly eventId: string;
}

export interface WebhookDeliveryResult {
  readonly delivered: boolean;
  readonly attempts: number;
  readonly lastError?: string;
}
