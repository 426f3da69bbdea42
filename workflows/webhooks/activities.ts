// Sends one webhook request, signed with the Standard Webhooks scheme (webhook-id, webhook-timestamp,
// webhook-signature over `id.timestamp.body` with the subscription's whsec_ secret), and records the attempt.
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Webhook } from 'standardwebhooks';
import type { WebhookDeliveryInput } from '../contract/webhooks.ts';
import { assertPublicUrl, PrivateUrlError, publicOnlyLookup } from '../../lib/network-guard.ts';
import { workerMetrics, type WebhookOutcome } from '../metrics.ts';

export interface WebhookAttempt {
  readonly deliveryId: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly attempt: number;
  readonly statusCode?: number;
  readonly error?: string;
  readonly durationMs: number;
}

export interface WebhookActivityDeps {
  /** The subscription's URL and signing secret; undefined once it was deleted. */
  readonly subscriptions: { find(id: string): Promise<{ url: string; secret: string } | undefined> };
  /** The event's payload exactly as it is to be sent. */
  readonly events: { payload(id: string): Promise<unknown> };
  readonly attempts: { record(attempt: WebhookAttempt): Promise<void> };
  /** Development lets receivers on loopback and private networks through; production refuses them (SSRF). */
  readonly allowPrivateUrls: boolean;
  readonly timeoutMs?: number;
}

export function createWebhookActivities(deps: WebhookActivityDeps) {
  return {
    async sendWebhook(input: WebhookDeliveryInput): Promise<{ attempt: number }> {
      const attempt = Context.current().info.attempt;
      const counted = (outcome: WebhookOutcome) => workerMetrics().webhookDeliveries.inc({ outcome });
      const subscription = await deps.subscriptions.find(input.subscriptionId);
      if (!subscription) {
        counted('gone');
        throw ApplicationFailure.create({ message: 'the subscription was deleted', type: 'SubscriptionGone', details: [{ attempt }] });
      }
      const body = JSON.stringify(await deps.events.payload(input.eventId));
      const started = Date.now();
      const record = (result: { statusCode?: number; error?: string }) =>
        deps.attempts.record({ ...input, attempt, durationMs: Date.now() - started, ...result });

      let status: number;
      try {
        if (!deps.allowPrivateUrls) await assertPublicUrl(subscription.url);
        const timestamp = new Date();
        status = await post(subscription.url, body, {
          'content-type': 'application/json',
          'user-agent': 'Kiln-Webhooks/1',
          'webhook-id': input.eventId,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signer(subscription.secret).sign(input.eventId, timestamp, body),
        }, { timeoutMs: deps.timeoutMs ?? 10_000, publicOnly: !deps.allowPrivateUrls });
      } catch (error) {
        const message = (error as Error).message;
        await record({ error: message });
        const type = error instanceof PrivateUrlError ? 'UrlNotAllowed' : 'DeliveryFailed';
        counted(type === 'UrlNotAllowed' ? 'blocked' : 'failed');
        throw ApplicationFailure.create({ message: `delivery failed: ${message}`, type, details: [{ attempt }] });
      }
      await record({ statusCode: status });
      const delivered = status >= 200 && status < 300;
      const refused = status >= 400 && status < 500 && status !== 408 && status !== 429;
      counted(delivered ? 'delivered' : refused ? 'refused' : 'failed');
      if (delivered) return { attempt };
      throw ApplicationFailure.create({ message: `the receiver answered ${status}`, type: refused ? 'ReceiverRefused' : 'DeliveryFailed', details: [{ attempt }] });
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;

/**
 * POSTs and answers the status; redirects are not followed (one could lead to a private address). With
 * `publicOnly` the connection goes only to an address publicOnlyLookup checked.
 */
export function post(url: string, body: string, headers: Record<string, string>, options: { timeoutMs: number; publicOnly: boolean }): Promise<number> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const requestOptions: RequestOptions = {
    method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    timeout: options.timeoutMs, ...(options.publicOnly ? { lookup: publicOnlyLookup } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = send(target, requestOptions, (res: IncomingMessage) => {
      res.resume(); // the answer's body is not read
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** A `whsec_` secret is base64 as the Standard Webhooks scheme defines; any other secret is used as raw bytes. */
export function signer(secret: string): Webhook {
  return secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
}
