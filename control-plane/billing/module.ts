// Billing: the credit ledger, the usage metering closes (workflows/metering/), and the routes that read them.
import { defineModule } from '../module.ts';
import { CreditEntrySchema } from './credit-entry.entity.ts';
import { ReplicaRecordSchema } from './replica-record.entity.ts';
import { UsageChargeSchema } from './usage-charge.entity.ts';
import { UsageIntervalSchema } from './usage-interval.entity.ts';
import { billingRoutes } from './routes.ts';
import { createBillingService } from './service.ts';

export const billingModule = defineModule({
  name: 'billing',
  entities: [CreditEntrySchema, ReplicaRecordSchema, UsageIntervalSchema, UsageChargeSchema],
  routes: ({ cursors }) => billingRoutes(createBillingService({ cursors })),
});
