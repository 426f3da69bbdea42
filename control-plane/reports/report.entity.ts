import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

export const REPORT_KINDS = ['customers', 'deployments', 'audit'] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];
export const REPORT_STATUSES = ['pending', 'running', 'ready', 'failed'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

/** A CSV report asked for by a platform administrator and written by its workflow into its ReportChunk rows. */
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
    /** When its workflow was started; null while Temporal could not take it (reports/delivery.ts starts it later). */
    workflowStartedAt: p.datetime(3).nullable(),
  },
});

export type Report = InferEntity<typeof ReportSchema>;

/**
 * A piece of a ready report's CSV, in order by `sequence`: the content lives in PostgreSQL so that any API
 * replica serves what any worker wrote, with no disk shared between hosts. In pieces rather than one bytea
 * because a report has no size bound: an audit report holds a line (~170 bytes) per audited request in its
 * window, so a year of a million requests a day is some 60 GB, past bytea's 1 GB and past what a process should
 * hold; in pieces of REPORT_CHUNK_BYTES (workflows/reports/store.ts) neither side holds more than one. Written
 * and read through SQL (workflows/reports/store.ts, reports/content.ts); declared for the schema.
 */
export const ReportChunkSchema = defineEntity({
  name: 'ReportChunk',
  properties: {
    report: () => p.manyToOne(ReportSchema).ref().primary().deleteRule('cascade'),
    sequence: p.integer().primary(),
    data: p.blob(),
  },
});
