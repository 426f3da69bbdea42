// The local Stripe stand-in as npm start and the tests run it: stripe-mock on loopback ports of our choosing
// (HTTPS too, so it never takes its default port 12112 on every interface), answering the official SDK the way
// the payments area calls it, with fresh ids each time, and stopping when asked.
import { mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import Stripe from 'stripe';
import { freePort } from '../../infra/servers/process.ts';
import { STRIPE_MOCK_SECRET_KEY, startStripeMock } from '../../infra/servers/stripe-mock.ts';

const listening = (host: string, port: number) => new Promise<boolean>((resolve) => {
  const socket = connect({ host, port }, () => { socket.destroy(); resolve(true); });
  socket.once('error', () => resolve(false));
});

test('stripe-mock serves Stripe\'s API on loopback to the SDK, and stops', async (t) => {
  const [port, httpsPort] = [await freePort(), await freePort()];
  const server = await startStripeMock({ dataDir: await mkdtemp(join(tmpdir(), 'kiln-stripe-mock-')), port, httpsPort });
  t.teardown(() => server.stop());
  t.is(server.url, `http://127.0.0.1:${port}`);
  t.true(await listening('127.0.0.1', httpsPort), 'its HTTPS listener is on the port given');

  const stripe = new Stripe(STRIPE_MOCK_SECRET_KEY, { host: '127.0.0.1', port, protocol: 'http' });
  const [a, b] = [await stripe.customers.create({ name: 'a' }), await stripe.customers.create({ name: 'b' })];
  t.regex(a.id, /^cus_/);
  t.not(a.id, b.id);
  const session = await stripe.checkout.sessions.create({
    mode: 'payment', customer: a.id, client_reference_id: 'org_1', success_url: 'http://kiln.test/s', cancel_url: 'http://kiln.test/c',
    line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 500, product_data: { name: 'Kiln credits' } } }],
  });
  t.like(session, { object: 'checkout.session', client_reference_id: 'org_1', customer: a.id });
  await t.throwsAsync(new Stripe('sk_live_x', { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 }).customers.create({}), { message: /testmode secret API key/ });

  await server.stop();
  t.false(await listening('127.0.0.1', port));
});
