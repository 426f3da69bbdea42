// MikroORM on PostgreSQL: Kiln's entities (entities.ts, every area's `*.entity.ts`) and migrations
// (migrations/index.ts, whose exports are the list).
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
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
  if (options.migrate ?? true) await orm.migrator.up();
  return orm;
}
