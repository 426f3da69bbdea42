// Webhook delivery on a real Temporal dev server to real HTTP receivers that verify signatures with the
// `standardwebhooks` package.
import anyTest, { type TestFn } from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Webhook } from 'standardwebhooks';
import { binaryPath } from '../../infra/tools/paths.ts';
import { WEBHOOK_DELIVERY_WORKFLOW, type WebhookDeliveryResult } from '../../workflows/contract/webhooks.ts';
import { createWebhookActivities, post, signer, type WebhookAttempt } from '../../workflows/webhooks/activities.ts';
import { isPrivateAddress, PrivateUrlError } from '../../lib/network-guard.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import { webhooksQueue } from '../../workflows/webhooks/queue.ts';
import { serveWorkerMetrics, workerMetrics } from '../../workflows/metrics.ts';
import { testBundleDir } from '../support/temporal.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';

installTestRuntime();
const test = anyTest as TestFn<{ env: TestWorkflowEnvironment }>;
test.before(async (t) => {
  t.context.env = await TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: binaryPath('temporal') } } });
});
test.after.always((t) => t.context.env?.teardown());

const SECRET = `whsec_${Buffer.from('kiln-test-signing-secret-32-bytes!').toString('base64')}`;
const PAYLOAD = { event: 'deployment.running', timestamp: '2026-11-21T10:00:00.000Z', data: { id: 'dep_1', name: 'llama', status: 'running', endpoint: 'http://llama.test', gpu: 'nvidia-l4', replicas: 1 } };

/** A receiver answering with the given statuses in turn; it keeps what it verified. */
async function receiver(statuses: number[]) {
  const verified: unknown[] = [];
  let calls = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      verified.push(new Webhook(SECRET).verify(Buffer.concat(chunks).toString(), req.headers as Record<string, string>));
      res.statusCode = statuses[Math.min(calls++, statuses.length - 1)]!;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, verified, close: () => server.close() };
}

async function deliver(t: { context: { env: TestWorkflowEnvironment }; title: string }, url: string, allowPrivateUrls = true) {
  const attempts: WebhookAttempt[] = [];
  const taskQueue = `webhooks-${t.title.replace(/\W+/g, '-').slice(0, 40)}`;
  const worker = await createQueueWorker(webhooksQueue, {
    connection: t.context.env.nativeConnection,
    bundleDir: testBundleDir(),
    taskQueue,
    activities: createWebhookActivities({
      subscriptions: { find: async (id) => (id === 'whs_1' ? { url, secret: SECRET } : undefined) },
      events: { payload: async () => PAYLOAD },
      attempts: { record: async (a) => { attempts.push(a); } },
      allowPrivateUrls,
    }),
  });
  const result = await worker.runUntil(t.context.env.client.workflow.execute(WEBHOOK_DELIVERY_WORKFLOW, {
    taskQueue, workflowId: `whd_${taskQueue}`, args: [{ deliveryId: `whd_${taskQueue}`, subscriptionId: 'whs_1', eventId: 'evt_1' }],
  })) as WebhookDeliveryResult;
  return { result, attempts };
}

test('a delivery is signed with the Standard Webhooks scheme and recorded', async (t) => {
  const r = await receiver([204]);
  t.teardown(r.close);
  const { result, attempts } = await deliver(t, r.url);
  t.deepEqual(result, { delivered: true, attempts: 1 });
  t.deepEqual(r.verified, [PAYLOAD]);
  t.like(attempts, [{ attempt: 1, statusCode: 204, subscriptionId: 'whs_1', eventId: 'evt_1' }]);
});

// Alone (serial): the deliveries of other tests would move the process's counts.
test.serial('each attempt\'s outcome, each activity\'s and the workflow\'s are counted, and the worker serves them to the holder of the metrics token', async (t) => {
  const token = 'worker-metrics-token-0123456789abcdefghij';
  const listener = await serveWorkerMetrics({ token, port: 0, host: '127.0.0.1' });
  t.teardown(() => listener.close());
  const scrape = async (authorization?: string) => {
    const res = await fetch(`http://127.0.0.1:${listener.port}/metrics/internal`, { headers: authorization ? { authorization } : {} });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  const deliveries = async (outcome: string) => (await workerMetrics().webhookDeliveries.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  const before = { delivered: await deliveries('delivered'), failed: await deliveries('failed'), refused: await deliveries('refused') };

  const r = await receiver([503, 204]);
  t.teardown(r.close);
  t.deepEqual((await deliver(t, r.url)).result, { delivered: true, attempts: 2 });
  t.is(await deliveries('delivered') - before.delivered, 1);
  t.is(await deliveries('failed') - before.failed, 1);
  t.is(await deliveries('refused') - before.refused, 0);

  const res = await scrape(`Bearer ${token}`);
  t.is(res.status, 200);
  t.is(res.type, 'text/plain; version=0.0.4; charset=utf-8');
  t.regex(res.text, new RegExp(`^kiln_webhook_deliveries_total\\{outcome="delivered"\\} ${before.delivered + 1}$`, 'm'));
  // This test's own task queue: the failed attempt, then the one that delivered.
  const queue = `webhooks-${t.title.replace(/\W+/g, '-').slice(0, 40)}`;
  t.regex(res.text, new RegExp(`^kiln_workflow_activity_outcomes_total\\{task_queue="${queue}",activity="sendWebhook",outcome="failed"\\} 1$`, 'm'));
  t.regex(res.text, new RegExp(`^kiln_workflow_activity_outcomes_total\\{task_queue="${queue}",activity="sendWebhook",outcome="completed"\\} 1$`, 'm'));
  t.regex(res.text, new RegExp(`^kiln_workflow_outcomes_total\\{task_queue="${queue}",workflow="${WEBHOOK_DELIVERY_WORKFLOW}",outcome="completed"\\} 1$`, 'm'));
  t.regex(res.text, /^process_resident_memory_bytes \d/m);

  for (const authorization of [undefined, `Bearer ${token}x`, token]) {
    const refused = await scrape(authorization);
    t.is(refused.status, 401, String(authorization));
    t.deepEqual(JSON.parse(refused.text), { error: 'Unauthorized', message: 'Invalid metrics token', code: 'INVALID_API_KEY', statusCode: 401 });
  }
  t.is((await fetch(`http://127.0.0.1:${listener.port}/metrics`)).status, 404);
});

test('a failing receiver sees retries with backoff until it accepts', async (t) => {
  const r = await receiver([500, 503, 200]);
  t.teardown(r.close);
  const { result, attempts } = await deliver(t, r.url);
  t.deepEqual(result, { delivered: true, attempts: 3 });
  t.deepEqual(attempts.map((a) => a.statusCode), [500, 503, 200]);
  t.is(r.verified.length, 3, 'every retry is signed');
});

test('a receiver that refuses for good is not retried', async (t) => {
  const r = await receiver([410]);
  t.teardown(r.close);
  const { result, attempts } = await deliver(t, r.url);
  t.like(result, { delivered: false, attempts: 1, lastError: 'the receiver answered 410' });
  t.is(attempts.length, 1);
});

test('in production a URL on loopback is refused before anything is sent', async (t) => {
  const r = await receiver([200]);
  t.teardown(r.close);
  const { result, attempts } = await deliver(t, r.url, false);
  t.false(result.delivered);
  t.regex(result.lastError ?? '', /127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback, private or link-local address/);
  t.deepEqual(r.verified, []);
  t.is(attempts.length, 1);
});

test('private, loopback and link-local addresses are recognised', (t) => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '::1', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1', '64:ff9b::a9fe:a9fe']) t.true(isPrivateAddress(a), a);
  for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) t.false(isPrivateAddress(a), a);
});

test('the connection itself refuses a name that resolves to a private address, whatever was checked before (DNS rebinding)', async (t) => {
  const receiver = createServer((_req, res) => res.end());
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => receiver.close());
  const url = `http://localhost:${(receiver.address() as AddressInfo).port}/hook`;
  const error = await t.throwsAsync(post(url, '{}', {}, { timeoutMs: 5_000, publicOnly: true }));
  t.true(error instanceof PrivateUrlError, String(error));
  t.regex(error!.message, /localhost resolves to (127\.0\.0\.1|::1), a loopback, private or link-local address/);
  t.is(await post(url, '{}', {}, { timeoutMs: 5_000, publicOnly: false }), 200, 'development lets it through');
});

test('a secret of the subscriber\'s own (not whsec_) signs as raw bytes, as Standard Webhooks receivers verify it', (t) => {
  const secret = 'my-own-webhook-secret-of-32-chars';
  const timestamp = new Date();
  const signature = signer(secret).sign('evt_1', timestamp, '{"a":1}');
  const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature };
  t.deepEqual(new Webhook(secret, { format: 'raw' }).verify('{"a":1}', headers), { a: 1 });
  const generated = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
  const whsec = signer(generated).sign('evt_2', timestamp, '{}');
  t.deepEqual(new Webhook(generated).verify('{}', { ...headers, 'webhook-id': 'evt_2', 'webhook-signature': whsec }), {});
});
