// Billing: the credit ledger, the usage metering closes (workflows/metering/), and the routes that read them.
import { defineModule } from '../module.ts';
import { billingRoutes } from './routes.ts';
import { createBillingService, type BillingService } from './service.ts';

declare module '../module.ts' {
  interface Services { billing: BillingService }
}

export const billingModule = defineModule({
  name: 'billing',
  services: ({ cursors }) => ({ billing: createBillingService({ cursors }) }),
  routes: ({ services }) => billingRoutes(services.billing),
});
