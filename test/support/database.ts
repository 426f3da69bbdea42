// A fresh PostgreSQL database per test file, on the server started by infra/with-test-servers.ts.
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { createDatabase } from '../../infra/servers/postgres.ts';

export async function createTestDatabase(testFile: string): Promise<string> {
  const server = process.env.KILN_TEST_DATABASE_URL;
  if (!server) throw new Error('KILN_TEST_DATABASE_URL is not set: run the tests with `npm test`');
  const stem = basename(testFile).replace(/\.test\.ts$/, '').replace(/[^a-z0-9]+/gi, '_').toLowerCase().slice(0, 40);
  return createDatabase(server, `t_${stem}_${randomBytes(4).toString('hex')}`);
}
