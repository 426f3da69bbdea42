// GET /v1/billing/invoices and GET /api/billing/invoices (the organization's invoices, newest first, in cursor
// pages) and GET /v1/billing/invoices/{id}/download (one as a PDF).
import { Readable } from 'node:stream';
import { z } from 'zod';
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import { DownloadInvoiceQuery, InvoiceIdParams, InvoicePdfStreams, InvoiceView, ListInvoicesQuery, ListInvoicesV1Query } from './schemas.ts';
import type { InvoiceService } from './service.ts';

export function invoiceRoutes(invoices: InvoiceService): Route[] {
  const common = { tag: 'Billing', resourceType: 'invoice', permission: 'billing:read' } as const;
  const list = (path: string, operationId: string, query: typeof ListInvoicesQuery | typeof ListInvoicesV1Query) => defineRoute({
    ...common, method: 'GET', path, operationId,
    summary: 'The organization\'s monthly invoices, newest first (cursor pages): GPU usage by deployment and GPU type, the plan fee, credits applied and the total',
    query, response: z.array(InvoiceView), list: true,
    handle: async ({ query, state }) => pageReply(await invoices.list(state.em, state.principal!, query)),
  });
  return [
    list('/v1/billing/invoices', 'listInvoicesV1', ListInvoicesV1Query),
    list('/api/billing/invoices', 'listInvoices', ListInvoicesQuery),
    defineRoute({
      ...common, method: 'GET', path: '/v1/billing/invoices/{id}/download', operationId: 'downloadInvoiceV1', summary: 'An invoice as a PDF document',
      params: InvoiceIdParams, query: DownloadInvoiceQuery, streams: InvoicePdfStreams, errors: [404],
      async handle({ params, state }) {
        state.resourceId = params.id;
        const { pdf, filename } = await invoices.pdf(state.em, state.principal!, params.id);
        return { stream: Readable.from([pdf]), contentType: 'application/pdf', filename };
      },
    }),
  ];
}
