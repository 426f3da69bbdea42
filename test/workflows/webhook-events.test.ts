// From a status edge to a signed webhook: the status store records the event, starts a delivery per matching
// subscription on the shared Temporal dev server, and a webhook worker delivers it to a real receiver.
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { Webhook } from 'standardwebhooks';
import { createStatusStore } from '../../workflows/deployment/status-store.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import { webhooksQueue } from '../../workflows/webhooks/queue.ts';
import { webhookDeliveries } from '../../workflows/webhooks/store.ts';
import { signup, startTestApi, validDeployment } from '../support/control-plane.ts';
import { testBundleDir, testTemporalAddress } from '../support/temporal.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';

installTestRuntime();

test('deployment.running reaches the subscriber signed; a subscriber of other events hears nothing', async (t) => {
  const api = await startTestApi(import.meta.filename);
  t.teardown(() => api.close());
  const received: { headers: Record<string, string>; body: string }[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => { received.push({ headers: req.headers as Record<string, string>, body }); res.end(); });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => receiver.close());
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const { token } = await signup(api);
  const wanted = await api.request('POST', '/api/webhooks', { token, body: { url, events: ['deployment.running'] } });
  await api.request('POST', '/api/webhooks', { token, body: { url: `${url}?other`, events: ['deployment.deleted'] } });
  const { body } = await api.request('POST', '/api/deployments', { token, body: validDeployment('hooked') });

  const client = new Client({ connection: await Connection.connect({ address: testTemporalAddress() }) });
  const worker = await createQueueWorker(webhooksQueue, {
    connection: await NativeConnection.connect({ address: testTemporalAddress() }),
    bundleDir: testBundleDir(),
    activities: webhooksQueue.activities({ orm: api.orm, signingKey: 'test-signing-key-0123456789abcdefghijklmnop', allowPrivateWebhookUrls: true }),
  });
  await worker.runUntil(async () => {
    const store = createStatusStore(api.orm, webhookDeliveries(api.orm, client));
    await store.record({ deploymentId: body.data.id, status: 'running', event: 'deployment.running', generation: 1, replicas: 1 });
    await store.record({ deploymentId: body.data.id, status: 'running', event: 'deployment.running', generation: 1, replicas: 1 }); // retried write
    for (let i = 0; i < 100 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    // A start retried after the delivery finished (an activity retry) must not deliver again.
    const { rows: [event] } = await api.pool.query(`SELECT id, organization_id, type FROM deployment_event WHERE deployment_id = $1 AND type = 'deployment.running'`, [body.data.id]);
    await new Promise((r) => setTimeout(r, 500));
    await webhookDeliveries(api.orm, client).startFor({ id: event.id, organizationId: event.organization_id, type: event.type });
    await new Promise((r) => setTimeout(r, 1500)); // a second delivery, if any, would arrive by now
  });

  t.is(received.length, 1, 'one event, one matching subscription, one delivery');
  const payload = new Webhook(wanted.body.data.secret).verify(received[0]!.body, received[0]!.headers) as { event: string; data: Record<string, unknown> };
  t.like(payload, { event: 'deployment.running', data: { id: body.data.id, name: 'hooked', status: 'running', gpu: 'nvidia-l4', replicas: 1 } });
  const attempts = await api.request('GET', `/api/webhooks/${wanted.body.data.id}/attempts`, { token });
  t.like(attempts.body.data, [{ attempt: 1, statusCode: 200, error: null }]);
  await client.connection.close();
});
