import test from 'ava';
import pg from 'pg';
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
