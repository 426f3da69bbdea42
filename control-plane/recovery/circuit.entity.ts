import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/**
 * The provisioning circuit of one (cluster provider, GPU type): consecutive failed provisioning attempts,
 * when it opened and when it half-opens. In PostgreSQL so every API replica and worker sees one state.
 */
export const CircuitSchema = defineEntity({
  name: 'Circuit',
  properties: {
    provider: p.string().primary(),
    gpuType: p.string().primary(),
    failures: p.integer().default(0),
    lastFailure: p.text().nullable(),
    /** Set while the circuit is open (or half-open); null when closed. */
    openedAt: p.datetime(3).nullable(),
    halfOpensAt: p.datetime(3).nullable(),
    /** When the half-open circuit's one trial attempt began; null when no trial is running. */
    trialStartedAt: p.datetime(3).nullable(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type Circuit = InferEntity<typeof CircuitSchema>;
