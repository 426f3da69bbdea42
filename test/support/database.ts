// A fresh PostgreSQL database per test file, on the server started by infra/with-test-servers.ts: a copy of
// the run's template database, which that script migrated once (opening it migrates nothing more).
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { createDatabase } from '../../infra/servers/postgres.ts';

export async function createTestDatabase(testFile: string): Promise<string> {
  const server = process.env.KILN_TEST_DATABASE_URL;
  const template = process.env.KILN_TEST_TEMPLATE_DATABASE;
  if (!server || !template) throw new Error('KILN_TEST_DATABASE_URL is not set: run the tests with `npm test`');
  const stem = basename(testFile).replace(/\.test\.ts$/, '').replace(/[^a-z0-9]+/gi, '_').toLowerCase().slice(0, 40);
  return createDatabase(server, `t_${stem}_${randomBytes(4).toString('hex')}`, { template });
}
