// Kiln's API migrates its database as it starts. Replicas started together on a new database (a new installation
// with several API pods) take turns: every one starts, and each migration is run once.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase } from '../../control-plane/database/orm.ts';
import * as migrations from '../../control-plane/database/migrations/index.ts';
import { createDatabase } from '../../infra/servers/postgres.ts';

test('three API processes migrating one empty database at once all start, and each migration runs once', async (t) => {
  const server = process.env.KILN_TEST_DATABASE_URL;
  if (!server) throw new Error('KILN_TEST_DATABASE_URL is not set: run the tests with `npm test`');
  // Empty, unlike the migrated copies test/support/database.ts makes.
  const url = await createDatabase(server, `t_migrations_${randomBytes(4).toString('hex')}`);
  const opened = await Promise.allSettled([1, 2, 3].map(() => openDatabase(url)));
  t.deepEqual(opened.map((o) => (o.status === 'rejected' ? String(o.reason) : o.status)), ['fulfilled', 'fulfilled', 'fulfilled']);
  for (const o of opened) if (o.status === 'fulfilled') await o.value.close();

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  const { rows } = await client.query<{ name: string; runs: string }>('SELECT name, count(*) AS runs FROM mikro_orm_migrations GROUP BY name');
  t.is(rows.length, Object.keys(migrations).length);
  t.true(rows.every((r) => r.runs === '1'));
});
