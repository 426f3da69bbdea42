// Invoices: the monthly invoices the worker's close issues (workflows/invoicing/), listed and downloaded as PDFs.
import { defineModule } from '../module.ts';
import { invoiceRoutes } from './routes.ts';
import { createInvoiceService } from './service.ts';

export const invoicesModule = defineModule({
  name: 'invoices',
  routes: ({ cursors }) => invoiceRoutes(createInvoiceService({ cursors })),
});
