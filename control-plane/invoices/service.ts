// Reads of invoices: the organization's list, newest first in cursor pages, and one invoice as a PDF. The worker
// issues them (workflows/invoicing/); nothing here writes one.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { NotFoundError } from '../core/errors.ts';
import type { CursorCodec, Page } from '../core/pagination.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { InvoiceSchema, type Invoice } from './invoice.entity.ts';
import { renderInvoicePdf } from './pdf.ts';
import type { InvoiceBody, ListInvoicesInput } from './schemas.ts';

const ORDERING = 'invoices:-number';
const MS_PER_HOUR = 3_600_000;

/**
 * The number printed on an invoice: KILN-<the organization id without its prefix>-<sequence, 4 digits at least>.
 * The whole id, not a part: two organizations' invoices never share a number.
 */
export function invoiceNumber(organizationId: string, sequence: number): string {
  return `KILN-${organizationId.replace(/^org_/, '').toUpperCase()}-${String(sequence).padStart(4, '0')}`;
}

export function invoiceView(invoice: Invoice): InvoiceBody {
  return {
    id: invoice.id,
    number: invoiceNumber(invoice.organizationId, invoice.number),
    sequence: invoice.number,
    organizationId: invoice.organizationId,
    periodStart: invoice.periodStart.toISOString(),
    periodEnd: invoice.periodEnd.toISOString(),
    plan: invoice.plan,
    planFeeCents: invoice.planFeeCents,
    usageCents: invoice.usageCents,
    creditsAppliedCents: invoice.creditsAppliedCents,
    totalCents: invoice.totalCents,
    currency: invoice.currency,
    lines: invoice.lines.map((line) => ({
      deploymentId: line.deploymentId, deploymentName: line.deploymentName, gpu: line.gpu, gpuMs: line.gpuMs,
      gpuHours: Math.round(line.gpuMs / (MS_PER_HOUR / 1000)) / 1000, rateCentsPerGpuHour: line.rateCentsPerHour, amountCents: line.amountCents,
    })),
    issuedAt: invoice.issuedAt.toISOString(),
  };
}

export function createInvoiceService(deps: { cursors: CursorCodec }) {
  return {
    async list(em: EntityManager, principal: Principal, query: ListInvoicesInput): Promise<Page<InvoiceBody>> {
      const after = query.cursor ? Number(JSON.parse(deps.cursors.decode(query.cursor, ORDERING))) : undefined;
      const rows = await em.find(InvoiceSchema, { organizationId: principal.organizationId, ...(after !== undefined ? { number: { $lt: after } } : {}) }, {
        orderBy: { number: 'desc' }, limit: query.limit + 1,
      });
      const page = deps.cursors.page(rows, query.limit, ORDERING, (last) => last.number);
      return { ...page, items: page.items.map(invoiceView) };
    },

    /** The invoice as a PDF, with the file name it is offered under. Another organization's is not found. */
    async pdf(em: EntityManager, principal: Principal, id: string): Promise<{ pdf: Buffer; filename: string }> {
      const invoice = await em.findOne(InvoiceSchema, { id, organizationId: principal.organizationId });
      if (!invoice) throw new NotFoundError(`Invoice ${id} not found`);
      const organization = await em.findOneOrFail(OrganizationSchema, principal.organizationId);
      const view = invoiceView(invoice);
      return { pdf: await renderInvoicePdf({ invoice: view, organizationName: organization.name }), filename: `${view.number}.pdf` };
    },
  };
}

export type InvoiceService = ReturnType<typeof createInvoiceService>;
