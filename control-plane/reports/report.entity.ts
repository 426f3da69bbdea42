import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

export const REPORT_KINDS = ['customers', 'deployments', 'audit'] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];
export const REPORT_STATUSES = ['pending', 'running', 'ready', 'failed'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

/** A CSV report asked for by a platform administrator and written by its workflow under DATA_DIR/reports. */
export const ReportSchema = defineEntity({
  name: 'Report',
  extends: BaseSchema,
  // The administrators' list, newest first (Migration20261125020000ReportsList).
  indexes: [{ properties: ['createdAt', 'id'] }],
  properties: {
    kind: p.string().$type<ReportKind>(),
    from: p.datetime(3).nullable(),
    to: p.datetime(3).nullable(),
    status: p.string().$type<ReportStatus>(),
    /** The administrator who asked (a plain id: reports outlive accounts). */
    requestedBy: p.string(),
    rows: p.integer().nullable(),
    bytes: p.bigint('number').nullable(),
    error: p.text().nullable(),
    completedAt: p.datetime(3).nullable(),
  },
});

export type Report = InferEntity<typeof ReportSchema>;
