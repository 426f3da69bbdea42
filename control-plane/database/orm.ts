// MikroORM on PostgreSQL: Kiln's entities (entities.ts, every area's `*.entity.ts`) and migrations
// (migrations/index.ts, whose exports are the list).
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import { ENTITIES } from './entities.ts';
import * as migrations from './migrations/index.ts';
import { applyScope } from '../core/row-level-security.ts';

export { ENTITIES };

export type Orm = MikroORM;

export async function openDatabase(databaseUrl: string, options: { migrate?: boolean } = {}): Promise<Orm> {
  const orm = await MikroORM.init({
    clientUrl: databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    migrations: {
      migrationsList: Object.values(migrations),
      snapshot: false,
      silent: true,
    },
    // Request handlers use a forked EntityManager each (http/request-context.ts); the global one is off limits.
    allowGlobalContext: false,
    pool: { max: 10 },
    // Each checkout takes the role and organization of the work it serves (core/row-level-security.ts).
    onReserveConnection: (connection) => applyScope(connection as Parameters<typeof applyScope>[0]),
  });
  if (options.migrate ?? true) await whileHoldingMigrationLock(databaseUrl, () => orm.migrator.up());
  return orm;
}

/** The advisory lock migrations are run under (any fixed number every Kiln process agrees on). */
const MIGRATION_LOCK = 7_301_844_156;

/**
 * API replicas started together (a new installation on Kubernetes) would each migrate at once, and all but one
 * fail on the tables the first creates: each waits its turn, and finds nothing left to run. The lock is held by a
 * connection of its own, for the ORM's pool spreads the migrations over several.
 */
async function whileHoldingMigrationLock(databaseUrl: string, migrate: () => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrate();
  } finally {
    // Closing the session releases the lock too.
    await client.end();
  }
}
