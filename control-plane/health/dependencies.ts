// What the API depends on, probed in the background: PostgreSQL (every request needs it) and Temporal (the
// dry run and workflow inspection need it; changes are saved and delivered later without it). Requests read
// the last probe instead of waiting on a dependency that hangs: a paused or unreachable database makes them
// answer 503 at once (http/dependency-guard.ts), and readiness reports each dependency as it stands.
import { Connection, type Client } from '@temporalio/client';
import pg from 'pg';
import { dropConnection, endClient } from '../../lib/pg-client.ts';
import { createPeriodic } from '../../lib/periodic.ts';
import { DatabaseUnavailableError } from '../core/errors.ts';

export type DependencyName = 'database' | 'temporal';

export interface DependencyState {
  readonly status: 'ok' | 'unavailable';
  /** When it entered this status (ISO 8601). */
  readonly since: string;
  /** Why it is unavailable: the probe's error, or that it did not answer in time. */
  readonly reason?: string;
}

export interface DependencyMonitor {
  /** Each dependency as the last probe found it (ok until a probe says otherwise). */
  state(): Readonly<Record<DependencyName, DependencyState>>;
  databaseAvailable(): boolean;
  /** Whether Temporal answered the last probe: the orchestrators refuse at once otherwise (core/workflow-calls.ts). */
  temporalAvailable(): boolean;
  /**
   * What `work` settles with, unless the database is unavailable now (DatabaseUnavailableError at once) or is found
   * so before it settles (DatabaseUnavailableError then, the work left to finish in the background): nothing
   * waits on a database that stopped answering for longer than the probes take to see it.
   */
  whileAvailable<T>(work: () => Promise<T>): Promise<T>;
  start(): void;
  stop(): Promise<void>;
}

export interface DependencyMonitorOptions {
  /** How to reach the database (the API's pool's settings). */
  readonly database: pg.ClientConfig;
  readonly temporal: Client;
  /** How often each dependency is probed. */
  readonly intervalMs?: number;
  /** Temporal is probed only this often (the inference gateway, which needs it only to wake deployments); every pass by default. */
  readonly temporalIntervalMs?: number;
  /** How long a probe may take before its dependency counts as unavailable. */
  readonly timeoutMs?: number;
}

/** A probe's answer within `timeoutMs`; 'timeout' otherwise. Checked after the event loop's pending I/O, so a busy process is not taken for a silent dependency. */
function within<T>(probe: Promise<T>, timeoutMs: number): Promise<T | 'timeout'> {
  let answered = false;
  const settled = probe.finally(() => { answered = true; });
  const late = new Promise<'timeout'>((resolve) => {
    setTimeout(() => setImmediate(() => { if (!answered) resolve('timeout'); }), timeoutMs).unref();
  });
  return Promise.race([settled, late]);
}

export function createDependencyMonitor(options: DependencyMonitorOptions): DependencyMonitor {
  // A database on a busy machine may take a while: only one that stays silent this long is taken for gone.
  const timeoutMs = options.timeoutMs ?? 1_500;
  const now = () => new Date().toISOString();
  const states: Record<DependencyName, DependencyState> = { database: { status: 'ok', since: now() }, temporal: { status: 'ok', since: now() } };
  const lostListeners = new Set<() => void>();
  const set = (name: DependencyName, status: DependencyState['status'], reason?: string) => {
    if (states[name].status === status) return;
    states[name] = { status, since: now(), ...(reason ? { reason } : {}) };
    if (name === 'database' && status === 'unavailable') for (const listener of lostListeners) listener();
  };

  // One connection of its own: a probe that hangs holds none of the pools' connections, and is dropped.
  let probe: { client: pg.Client; connected: Promise<unknown> } | undefined;
  const probeDatabase = async () => {
    if (!probe) {
      const client = new pg.Client({ ...options.database, connectionTimeoutMillis: timeoutMs });
      client.on('error', () => undefined);
      probe = { client, connected: client.connect() };
    }
    const { client, connected } = probe;
    const answer = await within(connected.then(() => client.query('select 1')), timeoutMs).catch((error: Error) => error);
    if (answer === 'timeout' || answer instanceof Error) {
      probe = undefined;
      // A connection to a server that stopped answering would wait for it forever: closed without a goodbye.
      dropConnection(client);
      set('database', 'unavailable', answer === 'timeout' ? `no answer within ${timeoutMs} ms` : answer.message);
    } else set('database', 'ok');
  };
  // A connection of its own, without the client's retries: a probe asks once, and a retry left pending when the
  // process closes its connections would fire on a closed channel.
  const shared = options.temporal.connection;
  const temporal = Connection.lazy({ ...(shared instanceof Connection ? shared.options : {}), interceptors: [] });
  const probeTemporal = async () => {
    const connection = temporal;
    const answer = await within(connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({})), timeoutMs)
      .catch((error: Error) => error);
    if (answer === 'timeout' || answer instanceof Error) set('temporal', 'unavailable', answer === 'timeout' ? `no answer within ${timeoutMs} ms` : answer.message);
    else set('temporal', 'ok');
  };
  let temporalProbedAt = -Infinity;
  const temporalDue = () => {
    if (performance.now() - temporalProbedAt < (options.temporalIntervalMs ?? 0)) return false;
    temporalProbedAt = performance.now();
    return true;
  };
  const periodic = createPeriodic(async () => { await Promise.all([probeDatabase(), temporalDue() ? probeTemporal() : undefined]); }, {
    intervalMs: options.intervalMs ?? 250,
    onError: () => undefined,
  });

  const databaseAvailable = () => states.database.status === 'ok';
  return {
    state: () => ({ ...states }),
    databaseAvailable,
    temporalAvailable: () => states.temporal.status === 'ok',
    async whileAvailable(work) {
      if (!databaseAvailable()) throw new DatabaseUnavailableError();
      let listener = () => {};
      const lost = new Promise<never>((_, reject) => { listener = () => reject(new DatabaseUnavailableError()); });
      lostListeners.add(listener);
      const running = work();
      try {
        return await Promise.race([running, lost]);
      } catch (error) {
        // Lost: whatever the work ends with later is nobody's answer.
        if (error instanceof DatabaseUnavailableError) running.catch(() => undefined);
        throw error;
      } finally {
        lostListeners.delete(listener);
      }
    },
    start() {
      // The API's own client connects on first use: connected now, in the background, a request's first call
      // to Temporal does not pay for the connection (nor is it failed by its deadline while connecting).
      if (shared instanceof Connection) shared.ensureConnected().catch(() => undefined);
      periodic.start();
    },
    async stop() {
      await periodic.stop();
      if (probe) await endClient(probe.client);
      probe = undefined;
      await temporal.close();
    },
  };
}
