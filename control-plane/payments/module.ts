// Payments: Stripe checkout for credits and plans, plan changes, the customer portal, and Stripe's webhooks,
// which move credits through the billing area's ledger and change plans. Stripe unconfigured, its routes answer 503.
import { defineModule } from '../module.ts';
import { paymentRoutes } from './routes.ts';
import { createPaymentService } from './service.ts';

export const paymentsModule = defineModule({
  name: 'payments',
  routes: ({ config, services }) => paymentRoutes(createPaymentService({ stripe: config.stripe, credentials: services.credentials })),
});
