// `npm start` as a newcomer and a supervisor meet it: a port it needs that is taken stops it at once with one line
// naming the setting that moves it; SIGTERM to the npm process (what systemd or a container runtime sends) stops
// every server it started within 10 s. Every port is a free one, so this runs beside anything else.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/eventually.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/** Every port npm start takes, free ones; the cluster's four in a row (the kernel hands out scattered ones). */
async function freePorts(): Promise<NodeJS.ProcessEnv> {
  // Taken below the kernel's ephemeral range (32768 and up), where every other test's servers get their ports:
  // a port found free there is not handed to another process before npm start claims it.
  // Each drawn block is remembered: a port found free stays free after its check, so it could be drawn twice.
  const drawn = new Set<number>();
  const block = async (size: number): Promise<number> => {
    for (;;) {
      const first = 20_000 + Math.floor(Math.random() * 12_000);
      const ports = Array.from({ length: size }, (_, i) => first + i);
      if (ports.some((port) => drawn.has(port))) continue;
      const held: Server[] = [];
      try {
        for (const port of ports) held.push(await listen(port));
        for (const port of ports) drawn.add(port);
        return first;
      } catch {
        // one of them is taken: try another
      } finally {
        await Promise.all(held.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      }
    }
  };
  const cluster = await block(4);
  const stripe = await block(2);
  // The cluster's pod range: one no other local cluster holds (each holds 127.N.0.0:16439 while it runs).
  let podNetwork = 0;
  for (let n = 65 + Math.floor(Math.random() * 60); !podNetwork; n = n === 127 ? 65 : n + 1) {
    const held = await listenOn(`127.${n}.0.0`, 16439).catch(() => undefined);
    if (held) {
      podNetwork = n;
      await new Promise<void>((resolve) => held.close(() => resolve()));
    }
  }
  return {
    KILN_GPU_CLUSTER_POD_NETWORK: String(podNetwork),
    KILN_POSTGRES_PORT: String(await block(1)), KILN_TEMPORAL_PORT: String(await block(1)), KILN_TEMPORAL_UI_PORT: String(await block(1)),
    KILN_PROMETHEUS_PORT: String(await block(1)), KILN_STRIPE_MOCK_PORT: String(stripe), KILN_GPU_CLUSTER_PORT: String(cluster),
    PORT: String(await block(1)), KILN_GATEWAY_PORT: String(await block(1)), KILN_WORKER_METRICS_PORT: String(await block(1)),
  };
}

const listen = (port: number) => listenOn('127.0.0.1', port);
function listenOn(host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** `npm start` as the README says, with its own data folder and the given ports; its output collected. */
async function npmStart(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'kiln-start-'));
  // As root, PostgreSQL runs as the `postgres` user, which must reach its folder (mkdtemp makes it owner-only).
  await chmod(dataDir, 0o755);
  // The addresses npm start would otherwise take from an enclosing test run's servers.
  const { DATABASE_URL, TEMPORAL_ADDRESS, KUBECONFIG, PROMETHEUS_URL, STRIPE_SECRET_KEY, ...inherited } = process.env;
  void DATABASE_URL; void TEMPORAL_ADDRESS; void KUBECONFIG; void PROMETHEUS_URL; void STRIPE_SECRET_KEY;
  const child = spawn('npm', ['start'], { cwd: ROOT, env: { ...inherited, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => { text += String(chunk); });
  child.stderr!.on('data', (chunk: Buffer) => { text += String(chunk); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/** The processes under `pid`, from /proc, deepest last. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ")".
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // it exited meanwhile
    }
  }
  const found: number[] = [];
  const walk = (p: number) => { for (const c of parents.get(p) ?? []) { found.push(c); walk(c); } };
  walk(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    // A zombie (exited, not yet reaped by its new parent) has stopped: it holds no port and runs nothing.
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

test('a port npm start needs is taken: it stops before starting anything, with one line that names the setting to change', async (t) => {
  const ports = await freePorts();
  const holder = await listen(Number(ports.KILN_PROMETHEUS_PORT));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const start = await npmStart(ports);
  t.not(await start.exited, 0);
  const failures = start.output().split('\n').filter((line) => line.includes('failed to start'));
  t.is(failures.length, 1, start.output());
  const { msg } = JSON.parse(failures[0]!) as { msg: string };
  t.regex(msg, new RegExp(`^failed to start: Prometheus cannot listen on 127\\.0\\.0\\.1:${ports.KILN_PROMETHEUS_PORT}: the port is in use.*set KILN_PROMETHEUS_PORT to a free port$`));
  // Nothing was started: PostgreSQL, the first server, made no data folder.
  const dataDir = /"data folder ([^"]+)"/.exec(start.output())?.[1] ?? /data folder (\S+)"/.exec(start.output())?.[1];
  t.truthy(dataDir, start.output());
  await t.throwsAsync(stat(join(dataDir!, 'postgres')));
});

test('npm start provisions the local cluster\'s GPU nodes through its workflow; SIGTERM to the npm start process stops every server it started within 10 s', async (t) => {
  const start = await npmStart(await freePorts());
  let started: number[] = [];
  // Whatever this test finds, nothing it started outlives it (orphans are no longer under npm: the list taken before).
  t.teardown(() => {
    for (const pid of [...started, ...descendants(start.child.pid!)]) {
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });
  await eventually('npm start ready', () => start.output().includes('ready; Ctrl-C stops everything') || start.child.exitCode !== null, 240_000);
  t.is(start.child.exitCode, null, start.output());
  // The cluster's GPU nodes are the node pools its workflow applied, counted once they are Ready.
  t.regex(start.output(), /GPU cluster registered as \\"local\\" \(clu_[0-9a-z]+\): 32 × nvidia-a100-80gb, 32 × nvidia-h100-80gb, 8 × nvidia-l4"/);
  started = descendants(start.child.pid!);
  // Kiln's node process, PostgreSQL, Temporal, the cluster's etcd, API server and kwok, the model servers,
  // stripe-mock and Prometheus.
  t.true(started.length >= 8, `only ${started.length} processes under npm start`);
  const signalled = performance.now();
  start.child.kill('SIGTERM');
  await eventually('every process gone', () => started.every((pid) => !alive(pid)), 15_000);
  const seconds = (performance.now() - signalled) / 1000;
  t.true(seconds <= 10, `stopped in ${seconds.toFixed(1)} s`);
  await start.exited;
  t.regex(start.output(), /"stopping"/);
});
