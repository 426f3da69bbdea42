// Runs a command (the test runner) with the servers every test file shares: one PostgreSQL, in which each
// test file creates its own database (test/support/database.ts), so files run in parallel, as a copy of one
// migrated once for the whole run (so no file runs the migrations again), and one Temporal
// dev server, and the local Stripe stand-in (stripe-mock) the payment tests send Stripe's API calls to. With
// DATABASE_URL, TEMPORAL_ADDRESS or KILN_TEST_STRIPE_API_BASE set, those servers are used instead (a developer's
// STRIPE_API_BASE is left alone: tests never reach Stripe itself). Every temporary folder the tests make (a local
// cluster's etcd preallocates 64 MB) lands in one TMPDIR under the data dir, removed when the run ends, so runs
// never fill the disk.
import { spawn } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { freePort } from './servers/process.ts';
import { openDatabase } from '../control-plane/database/orm.ts';
import { createDatabase, dropDatabase, externalPostgres, startPostgres } from './servers/postgres.ts';
import { externalStripeMock, startStripeMock } from './servers/stripe-mock.ts';
import { externalTemporal, startTemporal } from './servers/temporal.ts';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node infra/with-test-servers.ts <command> [args...]');
  process.exit(2);
}

const dataDir = join(process.env.DATA_DIR ?? '.data', 'test');
if (!process.env.DATABASE_URL) await rm(join(dataDir, 'postgres'), { recursive: true, force: true });
const postgres = process.env.DATABASE_URL
  ? externalPostgres(process.env.DATABASE_URL)
  : await startPostgres({ dataDir, port: await freePort() });

// Named per run: two runs may share one DATABASE_URL server.
const templateDatabase = `t_template_${process.pid}`;
async function migrateTemplate(): Promise<void> {
  await dropDatabase(postgres.url, templateDatabase);
  const orm = await openDatabase(await createDatabase(postgres.url, templateDatabase));
  await orm.close();
}

await rm(join(dataDir, 'temporal'), { recursive: true, force: true });
const [temporal] = await Promise.all([
  process.env.TEMPORAL_ADDRESS
    ? externalTemporal(process.env.TEMPORAL_ADDRESS)
    : startTemporal({ dataDir: join(dataDir, 'temporal'), port: await freePort(), uiPort: await freePort() }),
  migrateTemplate(),
]);

const stripe = process.env.KILN_TEST_STRIPE_API_BASE
  ? externalStripeMock(process.env.KILN_TEST_STRIPE_API_BASE)
  : await startStripeMock({ dataDir: join(dataDir, 'stripe-mock'), port: await freePort(), httpsPort: await freePort() });

const tempDir = join(dataDir, 'tmp');
await rm(tempDir, { recursive: true, force: true });
await mkdir(tempDir, { recursive: true });

const child = spawn(command, args, {
  stdio: 'inherit',
  env: {
    ...process.env, KILN_TEST_DATABASE_URL: postgres.url, KILN_TEST_TEMPLATE_DATABASE: templateDatabase, KILN_TEST_TEMPORAL_ADDRESS: temporal.address, KILN_TEST_STRIPE_API_BASE: stripe.url, KILN_TEST_DATA_DIR: dataDir, TMPDIR: resolve(tempDir),
    // Every test file's process loads the same few hundred modules: Node keeps their compiled code here.
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? resolve(dataDir, 'compile-cache'),
  },
});
const stopOn = (signal: NodeJS.Signals) => process.on(signal, () => child.kill(signal));
stopOn('SIGINT');
stopOn('SIGTERM');
const code = await new Promise<number>((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
await stripe.stop();
await temporal.stop();
await dropDatabase(postgres.url, templateDatabase);
await postgres.stop();
await rm(tempDir, { recursive: true, force: true });
process.exit(code);
