// Billing: the credit ledger, the usage metering closes (workflows/metering/), and the routes that read them.
import { defineModule } from '../module.ts';
import { billingRoutes } from './routes.ts';
import { createBillingService } from './service.ts';

export const billingModule = defineModule({
  name: 'billing',
  routes: ({ cursors }) => billingRoutes(createBillingService({ cursors })),
});
