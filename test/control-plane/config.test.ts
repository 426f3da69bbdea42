// Configuration from the environment (the API's and the worker's roles), the worker's entry point refusing a bad
// one, and startApi() as infra/start.ts calls it.
import { testTemporalAddress } from '../support/temporal.ts';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import pg from 'pg';
import { loadConfig } from '../../control-plane/config.ts';
import { startApi } from '../../control-plane/server.ts';
import { createTestDatabase } from '../support/database.ts';

const tempDir = () => mkdtemp(join(tmpdir(), 'kiln-config-'));

test('defaults suit a laptop; the development signing key is generated once and kept', async (t) => {
  const dataDir = await tempDir();
  const config = await loadConfig('api', { DATA_DIR: dataDir });
  t.like(config, { port: 8080, env: 'development', databaseUrl: undefined, dataDir, adminEmails: [] });
  t.true(config.signingKey.length >= 32);
  t.is((await readFile(join(dataDir, 'signing-key'), 'utf8')).trim(), config.signingKey);
  t.is((await loadConfig('api', { DATA_DIR: dataDir })).signingKey, config.signingKey);
});

test('production requires a signing key', async (t) => {
  const dataDir = await tempDir();
  await t.throwsAsync(loadConfig('api', { DATA_DIR: dataDir, KILN_ENV: 'production' }), { message: /KILN_SIGNING_KEY is required/ });
  const config = await loadConfig('api', {
    DATA_DIR: dataDir, KILN_ENV: 'production', KILN_SIGNING_KEY: 'p'.repeat(40), KILN_ADMIN_EMAILS: 'Ops@Example.com, root@example.com', SMTP_URL: 'smtps://u:p@mail.example:465',
  });
  t.like(config, { env: 'production', signingKey: 'p'.repeat(40), adminEmails: ['ops@example.com', 'root@example.com'] });
});

test('mail: unset SMTP_URL logs messages in development and stops a production start; links start with KILN_PUBLIC_URL', async (t) => {
  const development = await loadConfig('api', { DATA_DIR: await tempDir() });
  t.like(development, { smtpUrl: undefined, mailFrom: 'Kiln <no-reply@kiln.localhost>', publicUrl: 'http://127.0.0.1:8080' });
  await t.throwsAsync(loadConfig('api', { DATA_DIR: await tempDir(), KILN_ENV: 'production', KILN_SIGNING_KEY: 'p'.repeat(40) }), { message: /SMTP_URL is required/ });
  const configured = await loadConfig('api', { DATA_DIR: await tempDir(), SMTP_URL: 'smtp://mail.example:587', MAIL_FROM: 'Ops <ops@example.com>', KILN_PUBLIC_URL: 'https://kiln.example/' });
  t.like(configured, { smtpUrl: 'smtp://mail.example:587', mailFrom: 'Ops <ops@example.com>', publicUrl: 'https://kiln.example' });
});

test('Stripe: unset, payments are off (their routes answer 503); a secret key needs the webhook secret, which the billing webhook shares unless given its own; checkout returns to KILN_PUBLIC_URL/billing', async (t) => {
  const production = { DATA_DIR: await tempDir(), KILN_ENV: 'production', KILN_SIGNING_KEY: 'p'.repeat(40), SMTP_URL: 'smtps://u:p@mail.example:465' };
  t.is((await loadConfig('api', production)).stripe, undefined);
  await t.throwsAsync(loadConfig('api', { ...production, STRIPE_SECRET_KEY: 'sk_live_abc123' }), { message: /STRIPE_WEBHOOK_SECRET is required with STRIPE_SECRET_KEY/ });
  await t.throwsAsync(loadConfig('api', { ...production, STRIPE_SECRET_KEY: 'pk_live_abc123', STRIPE_WEBHOOK_SECRET: 'whsec_0123456789' }), { message: /STRIPE_SECRET_KEY/ });
  await t.throwsAsync(loadConfig('api', { ...production, STRIPE_SECRET_KEY: 'sk_live_abc123', STRIPE_WEBHOOK_SECRET: 'whsec_0123456789', STRIPE_API_BASE: 'ftp://stripe' }), { message: /STRIPE_API_BASE/ });
  const configured = await loadConfig('api', { ...production, STRIPE_SECRET_KEY: 'sk_live_abc123', STRIPE_WEBHOOK_SECRET: 'whsec_0123456789', KILN_PUBLIC_URL: 'https://kiln.example/' });
  t.deepEqual(configured.stripe, {
    secretKey: 'sk_live_abc123', apiBase: 'https://api.stripe.com', webhookSecret: 'whsec_0123456789', billingWebhookSecret: 'whsec_0123456789', returnUrl: 'https://kiln.example/billing',
  });
  const own = await loadConfig('api', {
    ...production, STRIPE_SECRET_KEY: 'sk_test_abc', STRIPE_WEBHOOK_SECRET: 'whsec_0123456789', STRIPE_BILLING_WEBHOOK_SECRET: 'whsec_billing_secret',
    STRIPE_API_BASE: 'http://127.0.0.1:12111/', KILN_BILLING_RETURN_URL: 'https://app.kiln.example/settings/billing',
  });
  t.like(own.stripe, { apiBase: 'http://127.0.0.1:12111', webhookSecret: 'whsec_0123456789', billingWebhookSecret: 'whsec_billing_secret', returnUrl: 'https://app.kiln.example/settings/billing' });
});

test('invalid values stop start-up naming the variable', async (t) => {
  for (const [name, value] of [['PORT', 'eighty'], ['KILN_ENV', 'staging'], ['DATABASE_URL', 'mysql://x'], ['KILN_SIGNING_KEY', 'short'], ['SMTP_URL', 'http://mail.example'], ['KILN_PUBLIC_URL', 'kiln.example'], ['KILN_METRICS_TOKEN', 'shorter than 32 characters']] as const) {
    await t.throwsAsync(loadConfig('api', { DATA_DIR: await tempDir(), [name]: value }), { message: new RegExp(name) }, name);
  }
});

const PRODUCTION = { KILN_ENV: 'production', KILN_SIGNING_KEY: 'p'.repeat(40), DATABASE_URL: 'postgres://kiln@db.example:5432/kiln' };

test('a production worker needs no mail settings; a production API without SMTP_URL is refused', async (t) => {
  const worker = await loadConfig('worker', { DATA_DIR: await tempDir(), ...PRODUCTION, PULUMI_CONFIG_PASSPHRASE: 'stack secrets', TEMPORAL_ADDRESS: 'temporal.example:7233' });
  t.like(worker, {
    env: 'production', databaseUrl: PRODUCTION.DATABASE_URL, temporalAddress: 'temporal.example:7233',
    pulumiPassphrase: 'stack secrets', allowPrivateWebhookUrls: false,
  });
  await t.throwsAsync(loadConfig('api', { DATA_DIR: await tempDir(), ...PRODUCTION }), { message: 'invalid configuration: SMTP_URL is required when KILN_ENV=production' });
});

test('worker: the Pulumi passphrase is required in production, generated and kept in development; the backend defaults to Kiln\'s database', async (t) => {
  await t.throwsAsync(loadConfig('worker', { DATA_DIR: await tempDir(), ...PRODUCTION }), { message: 'invalid configuration: PULUMI_CONFIG_PASSPHRASE is required when KILN_ENV=production' });
  const dataDir = await tempDir();
  const development = await loadConfig('worker', { DATA_DIR: dataDir, DATABASE_URL: PRODUCTION.DATABASE_URL });
  t.like(development, { temporalAddress: '127.0.0.1:7233', allowPrivateWebhookUrls: true, metricsToken: undefined, metricsPort: 9464, prometheusUrl: 'http://127.0.0.1:9090' });
  t.is((await loadConfig('worker', { DATA_DIR: dataDir, DATABASE_URL: PRODUCTION.DATABASE_URL, PROMETHEUS_URL: 'http://prometheus.example:9090/' })).prometheusUrl, 'http://prometheus.example:9090', 'the autoscaler and alert rules query PROMETHEUS_URL');
  t.is((await readFile(join(dataDir, 'pulumi-passphrase'), 'utf8')).trim(), development.pulumiPassphrase);
  t.is((await loadConfig('worker', { DATA_DIR: dataDir, DATABASE_URL: PRODUCTION.DATABASE_URL })).pulumiPassphrase, development.pulumiPassphrase);
  // The CLI's PostgreSQL backend, in the table Kiln's migrations make, connecting as Kiln does (its driver asks for TLS unless told).
  const backendOf = async (databaseUrl: string) => (await loadConfig('worker', { DATA_DIR: dataDir, DATABASE_URL: databaseUrl })).pulumiBackendUrl;
  t.is(await backendOf('postgres://kiln:pw@db.example:5432/kiln'), 'postgres://kiln:pw@db.example:5432/kiln?sslmode=disable&table=pulumi_state');
  t.is(await backendOf('postgresql://kiln:pw@db.example/kiln?sslmode=verify-full'), 'postgres://kiln:pw@db.example/kiln?sslmode=verify-full&table=pulumi_state');
  t.is(await backendOf('postgres://kiln:pw@db.example/kiln?ssl=true'), 'postgres://kiln:pw@db.example/kiln?sslmode=require&table=pulumi_state');
  t.is((await loadConfig('worker', { DATA_DIR: dataDir, DATABASE_URL: PRODUCTION.DATABASE_URL, PULUMI_BACKEND_URL: 's3://kiln-state' })).pulumiBackendUrl, 's3://kiln-state');
  await t.throwsAsync(loadConfig('worker', { DATA_DIR: dataDir }), { message: /DATABASE_URL is required by the worker/ });
  t.like(await loadConfig('worker', { DATA_DIR: dataDir, DATABASE_URL: PRODUCTION.DATABASE_URL, KILN_METRICS_TOKEN: 'm'.repeat(32), KILN_WORKER_METRICS_PORT: '0' }), { metricsToken: 'm'.repeat(32), metricsPort: 0 });
  for (const [name, value] of [['PULUMI_BACKEND_URL', 'kiln-state'], ['TEMPORAL_ADDRESS', 'http://temporal:7233'], ['KILN_WORKER_METRICS_PORT', '70000']] as const) {
    await t.throwsAsync(loadConfig('worker', { DATA_DIR: dataDir, DATABASE_URL: PRODUCTION.DATABASE_URL, [name]: value }), { message: new RegExp(name) }, name);
  }
});

test('the worker\'s entry point prints a configuration error alone, no stack, and exits 1', async (t) => {
  const child = spawn(process.execPath, [new URL('../../workflows/worker.ts', import.meta.url).pathname], {
    env: { PATH: process.env.PATH, DATA_DIR: await tempDir(), ...PRODUCTION, SMTP_URL: 'smtp://mail.example' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const code = await new Promise((resolve) => child.on('exit', resolve));
  t.is(code, 1);
  t.is(stderr, 'invalid configuration: PULUMI_CONFIG_PASSPHRASE is required when KILN_ENV=production\n');
});

for (const [entry, setting, server] of [['control-plane/main.ts', 'PORT', 'the API'], ['gateway/main.ts', 'KILN_GATEWAY_PORT', 'the inference gateway']] as const) {
  test(`${entry} with its port taken prints one line naming ${setting}, no stack, and exits 1`, async (t) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as AddressInfo).port;
    const child = spawn(process.execPath, [new URL(`../../${entry}`, import.meta.url).pathname], {
      env: {
        PATH: process.env.PATH, DATA_DIR: await tempDir(), DATABASE_URL: await createTestDatabase(import.meta.filename),
        TEMPORAL_ADDRESS: testTemporalAddress(), LOG_LEVEL: 'silent', [setting]: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    t.is(code, 1);
    t.is(stderr, `failed to start: ${server} cannot listen on port ${port}: it is in use. Stop what holds it, or set ${setting} to a free port\n`);
  });
}

test('startApi serves the API on the given database and port', async (t) => {
  const databaseUrl = await createTestDatabase(import.meta.filename);
  const config = await loadConfig('api', { DATABASE_URL: databaseUrl, PORT: '0', DATA_DIR: await tempDir(), TEMPORAL_ADDRESS: testTemporalAddress(), LOG_LEVEL: 'silent' });
  const api = await startApi({ config: { ...config, databaseUrl } });
  t.teardown(() => api.close());
  const res = await fetch(`${api.url}/api/health`);
  t.is(res.status, 200);
  t.deepEqual(await res.json(), { success: true, data: { status: 'ok', checks: { database: 'ok' } }, error: null });
});

test('a start that cannot listen (its port taken) fails with the cause and leaves nothing open: no connection to the database stays', async (t) => {
  const databaseUrl = await createTestDatabase(import.meta.filename);
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const config = await loadConfig('api', {
    DATABASE_URL: databaseUrl, PORT: String((taken.address() as AddressInfo).port), DATA_DIR: await tempDir(), TEMPORAL_ADDRESS: testTemporalAddress(), LOG_LEVEL: 'silent',
  });
  await t.throwsAsync(startApi({ config: { ...config, databaseUrl }, host: '127.0.0.1' }), { code: 'EADDRINUSE' });
  // The modules had started (the live-updates LISTEN connection among them): all of it was released.
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const { rows } = await db.query('select count(*)::int as open from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
  await db.end();
  t.is(rows[0].open, 0);
});
