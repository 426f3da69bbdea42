// The local Stripe stand-in: stripe-mock (github.com/stripe/stripe-mock, built by `npm run tools`) answers Stripe's
// API as Stripe's own OpenAPI description shapes it, so the payments area (control-plane/payments/) runs its real
// SDK calls in development and the tests without a Stripe account. It is stateless (every answer is a fixture
// with the request's values reflected in it, fresh ids each time) and sends no webhooks: tests sign their own
// events with the test webhook secret. STRIPE_API_BASE pointing elsewhere (Stripe itself) replaces it.
import { join } from 'node:path';
import { binaryPath } from '../tools/paths.ts';
import { startProcess, waitUntilReady } from './process.ts';

export interface StripeMockServer {
  /** http://127.0.0.1:<port>: Stripe's API paths (/v1/customers, /v1/checkout/sessions ...). */
  readonly url: string;
  stop(): Promise<void>;
}

/** stripe-mock takes any key shaped sk_test_<one word>; npm start's development settings use these. */
export const STRIPE_MOCK_SECRET_KEY = 'sk_test_kilnlocalstripemock';
export const STRIPE_MOCK_WEBHOOK_SECRET = 'whsec_kiln_local_stripe_mock_webhooks';

export interface StripeMockOptions {
  readonly dataDir: string;
  /** Its HTTP port, which Kiln uses. */
  readonly port: number;
  /** Its HTTPS port (a self-signed certificate), unused by Kiln: given an address, stripe-mock would otherwise take 12112 on every interface. */
  readonly httpsPort: number;
}

export async function startStripeMock(options: StripeMockOptions): Promise<StripeMockServer> {
  const url = `http://127.0.0.1:${options.port}`;
  // Both listeners on loopback only.
  const args = ['-http-addr', `127.0.0.1:${options.port}`, '-https-addr', `127.0.0.1:${options.httpsPort}`];
  const server = await startProcess('stripe-mock', binaryPath('stripe-mock'), args, {
    logFile: join(options.dataDir, 'stripe-mock.log'),
  });
  // Any answer means it listens (without a key it answers 401).
  await waitUntilReady(server, async () => { await fetch(`${url}/v1/customers`); return true; });
  return { url, stop: () => server.stop() };
}

export function externalStripeMock(url: string): StripeMockServer {
  return { url: url.replace(/\/$/, ''), stop: async () => {} };
}
