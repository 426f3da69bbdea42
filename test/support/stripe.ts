// Stripe settings for a test API: the shared local Stripe stand-in (stripe-mock, started by
// infra/with-test-servers.ts, which exports its address) with test keys and webhook secrets.
import type { StripeSettings } from '../../control-plane/config.ts';

export function testStripeSettings(): StripeSettings {
  const apiBase = process.env.KILN_TEST_STRIPE_API_BASE;
  if (!apiBase) throw new Error('KILN_TEST_STRIPE_API_BASE is not set: run the tests through infra/with-test-servers.ts, which starts stripe-mock');
  return {
    // stripe-mock takes any key shaped sk_test_<one word>.
    secretKey: 'sk_test_kilntests',
    apiBase,
    webhookSecret: 'whsec_payprovider_test_secret',
    billingWebhookSecret: 'whsec_billing_test_secret',
    returnUrl: 'http://kiln.test/billing',
  };
}
