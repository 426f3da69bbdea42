// `npm run bench:ws`: the live-updates socket (GET /v1/ws) at 1,000 open sockets over two API replicas on one
// database (an embedded PostgreSQL under DATA_DIR/bench, or DATABASE_URL's server), loopback only. Prints the
// events delivered per second, p50/p99 delivery latency (the event's row written -> the message parsed by its
// client) and the memory each idle socket costs the two replicas, each against a baseline of one socket
// measured in the same run. The clients run in a child process, so the replicas' memory is theirs alone.
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { PLANS } from '../catalog/plans.ts';
import { loadConfig } from '../control-plane/config.ts';
import type { AppDeps } from '../control-plane/module.ts';
import { startApi, type RunningApi } from '../control-plane/server.ts';
import { createDatabase, startPostgres } from '../infra/servers/postgres.ts';
import { freePort } from '../infra/servers/process.ts';

const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 1000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 200);
/** Events are written this many at a time, one statement each, back to back. */
const BATCH = 10;
/** No phase waits longer than this. */
const PHASE_TIMEOUT_MS = 120_000;

type ToClient = { open: { urls: string[]; count: number; query: string; token: string } } | { expect: number } | { exit: true };
type FromClient = { listening: true } | { opened: number } | { received: { count: number; latencies: number[]; lastAt: number } } | { error: string };

/** The child: opens sockets spread over the replicas, and timestamps every event it receives. */
async function runClients(): Promise<void> {
  const sockets: WebSocket[] = [];
  let latencies: number[] = [];
  let count = 0;
  let lastAt = 0;
  let expected = Infinity;
  const send = (message: FromClient) => process.send!(message);
  const report = () => {
    if (count < expected) return;
    send({ received: { count, latencies, lastAt } });
    expected = Infinity;
  };
  process.on('message', async (message: ToClient) => {
    try {
      if ('open' in message) {
        const { urls, query, token } = message.open;
        // A handful at a time: the replicas' rate limiter and accept queue see a realistic ramp.
        for (let i = 0; i < message.open.count; i += 50) {
          await Promise.all(Array.from({ length: Math.min(50, message.open.count - i) }, () => new Promise<void>((resolve, reject) => {
            // Alternating replicas: half the sockets on each.
            const ws = new WebSocket(`${urls[sockets.length % urls.length]}/v1/ws?${query}`, { headers: { authorization: `Bearer ${token}` } });
            ws.on('message', (data) => {
              const m = JSON.parse(String(data)) as { type: string; createdAt?: string };
              if (m.type === 'ws.ready') return resolve();
              if (!m.createdAt) return;
              const now = Date.now();
              latencies.push(now - Date.parse(m.createdAt));
              count += 1;
              lastAt = now;
              report();
            });
            ws.once('error', reject);
            sockets.push(ws);
          })));
        }
        send({ opened: sockets.length });
      } else if ('expect' in message) {
        latencies = [];
        count = 0;
        expected = message.expect;
        report();
      } else {
        for (const ws of sockets) ws.terminate();
        process.exit(0);
      }
    } catch (error) {
      send({ error: String(error) });
    }
  });
  // Messages sent before the listener above existed would be lost: the parent waits for this.
  send({ listening: true });
}

function waitFor<T extends FromClient>(child: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bench: no '${key}' from the clients within ${PHASE_TIMEOUT_MS / 1000} s`)), PHASE_TIMEOUT_MS);
    const listener = (message: FromClient) => {
      if ('error' in message) reject(new Error(message.error));
      if (!(key in message)) return;
      clearTimeout(timer);
      child.off('message', listener);
      resolve(message as T);
    };
    child.on('message', listener);
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function runBench(): Promise<void> {
  const dataDir = join(process.env.DATA_DIR ?? '.data', 'bench');
  const postgres = process.env.DATABASE_URL ? undefined : await startPostgres({ dataDir, port: await freePort() });
  const databaseUrl = await createDatabase(process.env.DATABASE_URL ?? postgres!.url, `kiln_bench_ws_${Date.now()}`);
  const config = await loadConfig('api', {
    DATABASE_URL: databaseUrl, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent',
    KILN_SIGNING_KEY: 'bench-signing-key-0123456789abcdefghijklmnop', KILN_ENDPOINT_DOMAIN: 'endpoints.bench', KILN_PUBLIC_URL: 'http://kiln.bench',
    TEMPORAL_ADDRESS: '127.0.0.1:7233',
  });
  const rateLimits = Object.fromEntries(PLANS.map((plan) => [plan, { perMinute: 1e9, burst: 1e9 }])) as AppDeps['rateLimits'];
  const replicas: RunningApi[] = [];
  for (let i = 0; i < 2; i += 1) replicas.push(await startApi({ config: { ...config, databaseUrl }, host: '127.0.0.1', overrides: { rateLimits } }));
  const [a, b] = replicas as [RunningApi, RunningApi];
  const child = fork(new URL(import.meta.url).pathname, ['client'], { execArgv: process.execArgv });
  try {
    await waitFor(child, 'listening');
    const signup = await (await fetch(`${a.url}/v1/auth/signup`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench-ws@example.com', password: 'bench-password', name: 'Bench', organizationName: 'Bench' }),
    })).json() as { access_token: string; user: { organization_id: string } };
    const organizationId = signup.user.organization_id;
    const open = { urls: [a.url, b.url].map((u) => u.replace(/^http/, 'ws')), query: `orgId=${organizationId}&types=notification`, token: signup.access_token };

    const memory = () => {
      globalThis.gc?.();
      const { heapUsed, rss } = process.memoryUsage();
      return { heapUsed, rss };
    };
    /** Writes EVENTS events as the triggers do (one live_event row each); answers when every socket got every one. */
    const deliver = async (sockets: number) => {
      const received = waitFor<{ received: { count: number; latencies: number[]; lastAt: number } }>(child, 'received');
      child.send({ expect: EVENTS * sockets } satisfies ToClient);
      const started = Date.now();
      for (let i = 0; i < EVENTS; i += BATCH) {
        await a.pool.query(`insert into live_event (organization_id, type, payload) select $1, 'notification.pushed', jsonb_build_object('title', 'bench', 'n', n) from generate_series(1, $2::int) n`,
          [organizationId, Math.min(BATCH, EVENTS - i)]);
      }
      const { received: r } = await received;
      const sorted = r.latencies.sort((x, y) => x - y);
      return { perSecond: r.count / ((r.lastAt - started) / 1000), p50: percentile(sorted, 50), p99: percentile(sorted, 99), count: r.count };
    };

    // Baseline: one socket.
    child.send({ open: { ...open, count: 1 } } satisfies ToClient);
    await waitFor(child, 'opened');
    await sleep(500);
    const before = memory();
    const one = await deliver(1);

    child.send({ open: { ...open, count: SOCKETS - 1 } } satisfies ToClient);
    await waitFor(child, 'opened');
    await sleep(1000);
    const after = memory();
    const many = await deliver(SOCKETS);

    const health = await (await fetch(`${a.url}/v1/ws/health?orgId=${organizationId}`, { headers: { authorization: `Bearer ${signup.access_token}` } })).json() as { connections: { organizationOnThisReplica: number } };
    const perSocket = (key: 'heapUsed' | 'rss') => ((after[key] - before[key]) / (SOCKETS - 1) / 1024).toFixed(1);
    console.log(`live updates: ${EVENTS} events written in bursts of ${BATCH} to ${SOCKETS} sockets over 2 replicas (${health.connections.organizationOnThisReplica} on replica A), loopback; both replicas in one process, the clients in another`);
    console.log(`baseline, 1 socket:     ${one.perSecond.toFixed(0).padStart(8)} deliveries/s (events x sockets)   p50 ${one.p50} ms   p99 ${one.p99} ms   (${one.count} messages)`);
    console.log(`${String(SOCKETS).padEnd(5)} sockets:          ${many.perSecond.toFixed(0).padStart(8)} deliveries/s (events x sockets)   p50 ${many.p50} ms   p99 ${many.p99} ms   (${many.count} messages)`);
    console.log(`memory per idle socket (both replicas, ${SOCKETS - 1} sockets over the 1-socket baseline): heap ${perSocket('heapUsed')} KiB, RSS ${perSocket('rss')} KiB${globalThis.gc ? '' : ' (without --expose-gc: rough)'}`);
  } finally {
    child.send({ exit: true } satisfies ToClient);
    for (const replica of replicas) await replica.close();
    await postgres?.stop();
  }
}

if (process.argv[2] === 'client') await runClients();
else await runBench();
