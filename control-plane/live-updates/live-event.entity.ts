import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/**
 * One thing an organization's sockets are told, in the bounded log PostgreSQL triggers append to (deployment
 * status changes, deployment and alert events, user notifications) and the API adds pushed notifications to.
 * Kept for KILN_WS_RETENTION_SECONDS (and at most KILN_WS_MAX_EVENTS rows) so a client that reconnects with
 * the last id it saw gets what it missed. Written and read through SQL (hub.ts); declared for the schema.
 */
export const LiveEventSchema = defineEntity({
  name: 'LiveEvent',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    createdAt: p.datetime(3),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    /** Set: only that user's sockets are told (their notifications). */
    userId: p.string().nullable(),
    type: p.string().length(64),
    deploymentId: p.string().nullable(),
    payload: p.json<Record<string, unknown>>(),
  },
});

/** A browser's single-use socket ticket: the hash of what the client holds, and the caller it stands for. */
export const LiveTicketSchema = defineEntity({
  name: 'LiveTicket',
  properties: {
    id: p.string().primary(),
    createdAt: p.datetime(3),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    userId: p.string(),
    principal: p.json<Record<string, unknown>>(),
    expiresAt: p.datetime(3),
    usedAt: p.datetime(3).nullable(),
  },
});

/** Each API replica's heartbeat: that it listens, and how many sockets it holds per organization. */
export const LiveReplicaSchema = defineEntity({
  name: 'LiveReplica',
  properties: {
    id: p.string().primary(),
    startedAt: p.datetime(3),
    seenAt: p.datetime(3),
    connections: p.integer().default(0),
    organizations: p.json<Record<string, number>>(),
  },
});

export type LiveEvent = InferEntity<typeof LiveEventSchema>;
