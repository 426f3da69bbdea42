// Provisioning circuits, one per (cluster provider, GPU type). Closed: attempts go ahead. After
// `failureThreshold` consecutive failed provisioning attempts (rule violations are not counted: the
// workflow refuses those before any attempt) it opens: new deployments and workflow attempts are refused.
// After `cooldownMs` it is half-open: one trial attempt goes ahead; its success closes the circuit, its
// failure opens it again. A reset closes it at once. The state is rows in PostgreSQL, changed under a row
// lock, so every API replica and worker sees and changes one state.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { CircuitSchema, type Circuit } from './circuit.entity.ts';

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitKey {
  readonly provider: string;
  readonly gpuType: string;
}

export interface CircuitView extends CircuitKey {
  readonly state: CircuitState;
  readonly failures: number;
  readonly lastFailure: string | null;
  readonly openedAt: string | null;
  readonly halfOpensAt: string | null;
  /** When the half-open circuit's trial attempt began; null when none is running. */
  readonly trialStartedAt: string | null;
  readonly updatedAt: string;
}

export interface CircuitOptions {
  readonly failureThreshold?: number;
  readonly cooldownMs?: number;
  /**
   * A trial that has reported nothing for this long (its worker died) no longer holds the half-open
   * circuit: the deployment activity's start-to-close timeout.
   */
  readonly trialTimeoutMs?: number;
  readonly now?: () => Date;
}

/**
 * A circuit as an organization sees it: its last failure is another organization's Pulumi error (their
 * namespace, deployment and resource names), so only platform administrators read it.
 */
export function circuitForOrganizations(circuit: CircuitView): CircuitView {
  return { ...circuit, lastFailure: null };
}

export const CIRCUIT_DEFAULTS = { failureThreshold: 5, cooldownMs: 5 * 60_000, trialTimeoutMs: 30 * 60_000 } as const;

export function createCircuitService(options: CircuitOptions = {}) {
  const threshold = options.failureThreshold ?? CIRCUIT_DEFAULTS.failureThreshold;
  const cooldownMs = options.cooldownMs ?? CIRCUIT_DEFAULTS.cooldownMs;
  const trialTimeoutMs = options.trialTimeoutMs ?? CIRCUIT_DEFAULTS.trialTimeoutMs;
  const now = options.now ?? (() => new Date());

  const stateOf = (c: Circuit, at: Date): CircuitState => {
    if (!c.openedAt) return 'closed';
    return c.halfOpensAt && at >= c.halfOpensAt ? 'half_open' : 'open';
  };
  const trialRunning = (c: Circuit, at: Date) => !!c.trialStartedAt && at.getTime() - c.trialStartedAt.getTime() < trialTimeoutMs;
  /** Open, or half-open with its one trial under way. */
  const refuses = (c: Circuit, at: Date) => {
    const state = stateOf(c, at);
    return state === 'open' || (state === 'half_open' && trialRunning(c, at));
  };
  const view = (c: Circuit): CircuitView => ({
    provider: c.provider, gpuType: c.gpuType, state: stateOf(c, now()), failures: c.failures, lastFailure: c.lastFailure ?? null,
    openedAt: c.openedAt?.toISOString() ?? null, halfOpensAt: c.halfOpensAt?.toISOString() ?? null,
    trialStartedAt: c.trialStartedAt?.toISOString() ?? null, updatedAt: c.updatedAt.toISOString(),
  });

  /** Runs `change` on the key's circuit row (created closed when missing), locked for the transaction. */
  const locked = <T>(em: EntityManager, key: CircuitKey, change: (c: Circuit, at: Date) => T): Promise<T> =>
    em.fork().transactional(async (tx) => {
      await tx.upsert(CircuitSchema, { provider: key.provider, gpuType: key.gpuType, failures: 0, updatedAt: now() }, {
        onConflictAction: 'ignore', onConflictFields: ['provider', 'gpuType'], disableIdentityMap: true,
      });
      const circuit = await tx.findOneOrFail(CircuitSchema, { provider: key.provider, gpuType: key.gpuType }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      return change(circuit, now());
    });

  const close = (c: Circuit) => Object.assign(c, { failures: 0, lastFailure: null, openedAt: null, halfOpensAt: null, trialStartedAt: null });
  const open = (c: Circuit, at: Date) => Object.assign(c, { openedAt: at, halfOpensAt: new Date(at.getTime() + cooldownMs), trialStartedAt: null });

  return {
    async list(em: EntityManager): Promise<CircuitView[]> {
      const circuits = await em.find(CircuitSchema, {}, { orderBy: { provider: 'asc', gpuType: 'asc' } });
      return circuits.map(view);
    },

    /** The circuit refusing new attempts for this key, if it does (creation's check; it takes no trial). */
    async refusing(em: EntityManager, key: CircuitKey): Promise<CircuitView | undefined> {
      const circuit = await em.findOne(CircuitSchema, { provider: key.provider, gpuType: key.gpuType });
      return circuit && refuses(circuit, now()) ? view(circuit) : undefined;
    },

    /**
     * Asks to make a provisioning attempt: answers undefined when it may go ahead (taking the half-open
     * circuit's trial), or the circuit that refuses it.
     */
    acquire: (em: EntityManager, key: CircuitKey): Promise<CircuitView | undefined> => locked(em, key, (c, at) => {
      if (refuses(c, at)) return view(c);
      if (stateOf(c, at) === 'half_open') c.trialStartedAt = at;
      return undefined;
    }),

    recordSuccess: (em: EntityManager, key: CircuitKey): Promise<void> => locked(em, key, (c) => { close(c); }),

    recordFailure: (em: EntityManager, key: CircuitKey, reason: string): Promise<void> => locked(em, key, (c, at) => {
      c.failures += 1;
      c.lastFailure = reason.slice(0, 2000);
      // A failed trial reopens the circuit; a closed one opens at the threshold.
      if (stateOf(c, at) !== 'closed' || c.failures >= threshold) open(c, at);
    }),

    reset: (em: EntityManager, key: CircuitKey): Promise<CircuitView> => locked(em, key, (c) => view(close(c))),
  };
}

export type CircuitService = ReturnType<typeof createCircuitService>;
