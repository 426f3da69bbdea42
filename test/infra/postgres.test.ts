import test from 'ava';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgres } from '../../infra/servers/postgres.ts';
import { createTestDatabase } from '../support/database.ts';

test('PostgreSQL answers a query in a database of its own', async (t) => {
  const url = await createTestDatabase(import.meta.filename);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  await client.query('CREATE TABLE probe (id int primary key, note text)');
  await client.query("INSERT INTO probe VALUES (1, 'kiln')");
  const { rows } = await client.query<{ note: string; db: string }>('SELECT note, current_database() AS db FROM probe WHERE id = 1');
  t.is(rows[0]?.note, 'kiln');
  t.is(rows[0]?.db, new URL(url).pathname.slice(1));
});

test('the embedded server on a port another server holds fails in one line that names the port and what to do; it makes no Unix socket', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-pg-'));
  await chmod(dir, 0o755); // run as root, the server runs as a `postgres` user that must reach its folder
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const port = (taken.address() as AddressInfo).port;

  const error = await t.throwsAsync(startPostgres({ dataDir: dir, port }));
  t.regex(error.message, new RegExp(`^the embedded PostgreSQL did not start on 127\\.0\\.0\\.1:${port} \\(.*\\): port ${port} is taken by another server: stop it, or set KILN_POSTGRES_PORT`));
  t.false(error.message.includes('\n'));
  t.false(existsSync(`/tmp/.s.PGSQL.${port}`));
  t.false(existsSync(`/tmp/.s.PGSQL.${port}.lock`));
});
