// Payloads of GET /v1/billing/invoices, GET /api/billing/invoices and GET /v1/billing/invoices/{id}/download.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';
import { pageQuery } from '../core/pagination.ts';

export const ListInvoicesV1Query = z.strictObject({ ...orgIdQuery, ...pageQuery });
export const ListInvoicesQuery = z.strictObject({ ...pageQuery });

export const InvoiceIdParams = z.object({ id: z.string().max(64).meta({ example: 'ivc_0123456789abcdefghij' }) });
export const DownloadInvoiceQuery = z.strictObject({ ...orgIdQuery });

const cents = z.number().int().min(0);

export const InvoiceLineView = z.object({
  deploymentId: z.string(),
  deploymentName: z.string(),
  gpu: z.string(),
  gpuMs: z.number().int().meta({ description: 'GPU-milliseconds over the period (GPUs held x time), exact.' }),
  gpuHours: z.number().meta({ description: 'gpuMs in hours, to three decimals (for display; the amount is from the exact usage).' }),
  rateCentsPerGpuHour: z.number().int(),
  amountCents: cents.meta({ description: 'gpuMs x rate, rounded once to the cent.' }),
});

export const InvoiceView = z.object({
  id: z.string(),
  number: z.string().meta({ description: 'The invoice\'s number as printed, unique across organizations: KILN-<organization id>-<sequence>.', example: 'KILN-0123456789ABCDEFGHIJ-0001' }),
  sequence: z.number().int().min(1).meta({ description: 'The organization\'s invoices are numbered 1, 2, 3... in the order issued.' }),
  organizationId: z.string(),
  periodStart: z.iso.datetime(),
  periodEnd: z.iso.datetime().meta({ description: 'The period is [periodStart, periodEnd): a calendar month, UTC.' }),
  plan: z.string().meta({ description: 'The plan the organization had over the period.' }),
  planFeeCents: cents,
  usageCents: cents.meta({ description: 'The sum of the lines.' }),
  creditsAppliedCents: cents.meta({ description: 'What the period\'s metered usage drew from prepaid credits (while the balance lasted).' }),
  totalCents: cents.meta({ description: 'planFeeCents + usageCents - creditsAppliedCents, never below zero.' }),
  currency: z.string().meta({ example: 'usd' }),
  lines: z.array(InvoiceLineView).meta({ description: 'GPU usage by deployment and GPU type.' }),
  issuedAt: z.iso.datetime(),
}).meta({ id: 'Invoice' });

export const InvoicePdfStreams = {
  'application/pdf': z.string().meta({ format: 'binary', description: 'The invoice as a PDF document (Content-Disposition: attachment; filename="<number>.pdf").' }),
};

export type ListInvoicesInput = z.output<typeof ListInvoicesQuery>;
export type InvoiceBody = z.infer<typeof InvoiceView>;
