import { z } from 'zod';
import { optionalOrgIdQuery, orgIdQuery } from '../core/organization-query.ts';
import { pageQuery, sortParam } from '../core/pagination.ts';
import { instant, periodInOrder } from '../core/period-query.ts';

export const AUDIT_SORT_FIELDS = ['created_at'] as const;
export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;

const id = z.string().min(1).max(64);

const filters = {
  userId: id.optional().meta({ description: 'Records of this user (the acting user).', example: 'usr_0123456789abcdefghij' }),
  apiKeyId: id.optional().meta({ description: 'Records of requests made with this API key.', example: 'key_0123456789abcdefghij' }),
  action: z.string().min(1).max(255).optional().meta({ description: 'The operation, as its operationId.', example: 'createDeploymentV1' }),
  resourceType: z.string().min(1).max(64).optional().meta({ example: 'deployment' }),
  resourceId: id.optional().meta({ example: 'dep_0123456789abcdefghij' }),
  from: instant.optional().meta({ description: 'Created at or after this instant (ISO 8601).', example: '2026-11-01T00:00:00Z' }),
  to: instant.optional().meta({ description: 'Created before this instant (ISO 8601).', example: '2026-12-01T00:00:00Z' }),
  sort: sortParam(AUDIT_SORT_FIELDS, '-created_at'),
};

const page = {
  ...pageQuery,
};

export const ListAuditQuery = periodInOrder(z.object({ ...page, ...filters, ...orgIdQuery }));

/** The platform-wide listing (platform administration): the same filters, the organization one of them. */
export const ListPlatformAuditQuery = periodInOrder(z.object({
  ...page,
  ...filters,
  organizationId: id.optional().meta({ description: 'Records of this organization (default: every organization).', example: 'org_0123456789abcdefghij' }),
}));

export const ExportAuditQuery = periodInOrder(z.object({
  format: z.enum(EXPORT_FORMATS).default('csv').meta({ description: 'csv (with a header row) or jsonl (one record per line).' }),
  ...filters,
  ...orgIdQuery,
}));

// A record's fields are named as the spec's audit log names them, in every answer and export.
export const AuditRecordView = z.object({
  id: z.string().meta({ example: 'aud_0123456789abcdefghij' }),
  created_at: z.iso.datetime(),
  user_id: z.string(),
  api_key_id: z.string().nullable(),
  action: z.string(),
  resource_type: z.string(),
  resource_id: z.string().nullable(),
  ip_address: z.string(),
  status_code: z.number().int(),
}).meta({ id: 'AuditRecord' });

export const PlatformAuditRecordView = AuditRecordView.extend({ organization_id: z.string() }).meta({ id: 'PlatformAuditRecord' });

/** Columns of the CSV export, in order: the fields of AuditRecord. */
export const AUDIT_COLUMNS = Object.keys(AuditRecordView.shape) as Array<keyof z.infer<typeof AuditRecordView>>;

export const AUDIT_EXPORT_MEDIA_TYPES = {
  csv: 'text/csv',
  jsonl: 'application/x-ndjson',
} as const satisfies Record<(typeof EXPORT_FORMATS)[number], string>;

export const AuditExportStreams = {
  [AUDIT_EXPORT_MEDIA_TYPES.csv]: z.string().meta({ description: `A header row, then one AuditRecord per row: ${AUDIT_COLUMNS.join(', ')}.` }),
  [AUDIT_EXPORT_MEDIA_TYPES.jsonl]: z.string().meta({ description: 'One AuditRecord JSON object per line.' }),
};

export const AnalyticsQuery = periodInOrder(z.object({
  from: instant.optional().meta({ description: 'Start of the period (ISO 8601; default: 30 days before `to`).', example: '2026-11-01T00:00:00Z' }),
  to: instant.optional().meta({ description: 'End of the period, exclusive (ISO 8601; default: now).', example: '2026-12-01T00:00:00Z' }),
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Entries per breakdown (the busiest first), 1 to 100.' }),
  ...optionalOrgIdQuery,
}));

const usage = {
  requests: z.number().int().meta({ description: 'Audited requests: every request made with an API key, and every mutation.' }),
  mutations: z.number().int().meta({ description: 'Audited requests that changed (or tried to change) something.' }),
};

export const AnalyticsView = z.object({
  period: z.object({ from: z.iso.datetime(), to: z.iso.datetime() }),
  totals: z.object(usage),
  byMember: z.array(z.object({ userId: z.string(), email: z.string().nullable(), name: z.string().nullable(), ...usage })),
  byApiKey: z.array(z.object({ apiKeyId: z.string(), name: z.string().nullable(), prefix: z.string().nullable(), ...usage })),
  byDeployment: z.array(z.object({ deploymentId: z.string(), name: z.string().nullable(), gpu: z.string().nullable(), ...usage })),
  deployments: z.object({
    byGpuType: z.array(z.object({
      gpu: z.string(),
      created: z.number().int().meta({ description: 'Deployments created in the period.' }),
      active: z.number().int().meta({ description: 'Deployments that existed (were not deleted) at some time in the period.' }),
    })),
  }),
}).meta({ id: 'Analytics' });

export type ListAuditInput = z.output<typeof ListAuditQuery>;
export type ExportAuditInput = z.output<typeof ExportAuditQuery>;
export type AuditFilters = Omit<ListAuditInput, 'limit' | 'cursor' | 'orgId'>;
export type AuditRecordBody = z.infer<typeof AuditRecordView>;
export type ListPlatformAuditInput = z.output<typeof ListPlatformAuditQuery>;
export type PlatformAuditRecordBody = z.infer<typeof PlatformAuditRecordView>;
export type AnalyticsInput = z.output<typeof AnalyticsQuery>;
export type AnalyticsBody = z.infer<typeof AnalyticsView>;
