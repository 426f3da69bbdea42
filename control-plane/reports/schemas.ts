import { z } from 'zod';
import { pageQuery } from '../core/pagination.ts';
import { REPORT_KINDS, REPORT_STATUSES } from './report.entity.ts';

const instant = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 timestamp.' });

export const GenerateReportRequest = z.strictObject({
  kind: z.enum(REPORT_KINDS).meta({ description: 'customers (every organization, requests counted in the window), deployments or audit (rows created in the window).' }),
  from: instant.optional().meta({ description: 'Start of the window (included); default: the beginning.' }),
  to: instant.optional().meta({ description: 'End of the window (excluded); default: now.' }),
}).refine((r) => !r.from || !r.to || new Date(r.from) < new Date(r.to), { message: 'must be after from', path: ['to'] })
  .meta({ id: 'GenerateReportRequest' });
export type GenerateReportInput = z.output<typeof GenerateReportRequest>;

export const ReportIdParams = z.object({ id: z.string().max(64) });

export const ListReportsQuery = z.object({
  ...pageQuery,
  kind: z.enum(REPORT_KINDS).optional().meta({ description: 'Only reports of this kind.' }),
  status: z.enum(REPORT_STATUSES).optional().meta({ description: 'Only reports in this status.' }),
});
export type ListReportsInput = z.output<typeof ListReportsQuery>;

export const ReportView = z.object({
  id: z.string().meta({ example: 'rpt_0123456789abcdefghij' }),
  kind: z.enum(REPORT_KINDS),
  status: z.enum(REPORT_STATUSES),
  from: z.iso.datetime().nullable(),
  to: z.iso.datetime().nullable(),
  requestedBy: z.object({
    id: z.string().meta({ example: 'usr_0123456789abcdefghij' }),
    email: z.string().nullable().meta({ description: 'Null once the account is gone (reports outlive accounts).' }),
  }).meta({ description: 'The administrator who asked for the report.' }),
  rows: z.number().int().nullable(),
  bytes: z.number().int().nullable(),
  error: z.string().nullable().meta({ description: 'Why the report failed; null unless status is failed.' }),
  createdAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullable(),
  statusUrl: z.string().meta({ description: 'Where to poll the report.', example: '/v1/admin/reports/rpt_0123456789abcdefghij' }),
  downloadUrl: z.string().meta({ description: 'Where the CSV is served once status is ready.', example: '/v1/admin/reports/rpt_0123456789abcdefghij/download' }),
}).meta({ id: 'Report' });
export type ReportViewBody = z.infer<typeof ReportView>;
