// Configuration from the environment, and startApi() as infra/start.ts calls it.
import { testTemporalAddress } from '../support/temporal.ts';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { loadConfig } from '../../control-plane/config.ts';
import { startApi } from '../../control-plane/main.ts';
import { createTestDatabase } from '../support/database.ts';

const tempDir = () => mkdtemp(join(tmpdir(), 'kiln-config-'));

test('defaults suit a laptop; the development signing key is generated once and kept', async (t) => {
  const dataDir = await tempDir();
  const config = await loadConfig({ DATA_DIR: dataDir });
  t.like(config, { port: 8080, env: 'development', databaseUrl: undefined, dataDir, adminEmails: [] });
  t.true(config.signingKey.length >= 32);
  t.is((await readFile(join(dataDir, 'signing-key'), 'utf8')).trim(), config.signingKey);
  t.is((await loadConfig({ DATA_DIR: dataDir })).signingKey, config.signingKey);
});

test('production requires a signing key', async (t) => {
  const dataDir = await tempDir();
  await t.throwsAsync(loadConfig({ DATA_DIR: dataDir, KILN_ENV: 'production' }), { message: /KILN_SIGNING_KEY is required/ });
  const config = await loadConfig({
    DATA_DIR: dataDir, KILN_ENV: 'production', KILN_SIGNING_KEY: 'p'.repeat(40), KILN_ADMIN_EMAILS: 'Ops@Example.com, root@example.com', SMTP_URL: 'smtps://u:p@mail.example:465',
  });
  t.like(config, { env: 'production', signingKey: 'p'.repeat(40), adminEmails: ['ops@example.com', 'root@example.com'] });
});

test('mail: unset SMTP_URL logs messages in development and stops a production start; links start with KILN_PUBLIC_URL', async (t) => {
  const development = await loadConfig({ DATA_DIR: await tempDir() });
  t.like(development, { smtpUrl: undefined, mailFrom: 'Kiln <no-reply@kiln.localhost>', publicUrl: 'http://127.0.0.1:8080' });
  await t.throwsAsync(loadConfig({ DATA_DIR: await tempDir(), KILN_ENV: 'production', KILN_SIGNING_KEY: 'p'.repeat(40) }), { message: /SMTP_URL is required/ });
  const configured = await loadConfig({ DATA_DIR: await tempDir(), SMTP_URL: 'smtp://mail.example:587', MAIL_FROM: 'Ops <ops@example.com>', KILN_PUBLIC_URL: 'https://kiln.example/' });
  t.like(configured, { smtpUrl: 'smtp://mail.example:587', mailFrom: 'Ops <ops@example.com>', publicUrl: 'https://kiln.example' });
});

test('invalid values stop start-up naming the variable', async (t) => {
  for (const [name, value] of [['PORT', 'eighty'], ['KILN_ENV', 'staging'], ['DATABASE_URL', 'mysql://x'], ['KILN_SIGNING_KEY', 'short'], ['SMTP_URL', 'http://mail.example'], ['KILN_PUBLIC_URL', 'kiln.example']] as const) {
    await t.throwsAsync(loadConfig({ DATA_DIR: await tempDir(), [name]: value }), { message: new RegExp(name) }, name);
  }
});

test('startApi serves the API on the given database and port', async (t) => {
  const databaseUrl = await createTestDatabase(import.meta.filename);
  const api = await startApi({ databaseUrl, port: 0, dataDir: await tempDir(), temporalAddress: testTemporalAddress() });
  t.teardown(() => api.close());
  const res = await fetch(`${api.url}/api/health`);
  t.is(res.status, 200);
  t.deepEqual(await res.json(), { success: true, data: { status: 'ok', checks: { database: 'ok' } }, error: null });
});
