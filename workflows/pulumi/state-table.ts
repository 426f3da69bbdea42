// A PostgreSQL backend's files (`postgres://user:password@host:port/database?table=pulumi_state`), as the CLI
// keeps them (Go: pkg backend/diy/postgres/bucket.go, backend.go): one row per file in the table `table` (default
// pulumi_state) of `key text primary key, data json, updated_at`, `data` being `{"data": "<the file, base64>"}`;
// each key is the file's path after the URL's path (the database's name, so `kiln/.pulumi/meta.yaml`); each write
// one upsert. Kiln's connections to it are a small pool per process, over the URL without `table`.
import pg from 'pg';
import type { StateFiles } from './state-files.ts';

/** Plain lower-case names: the CLI puts the name into its SQL unquoted (and into its index's name). */
const TABLE_NAME = /^[a-z_][a-z0-9_]{0,40}$/;

/** The table and key prefix a `postgres://` backend URL names, and the connection string without them. */
export function stateTableOf(backendUrl: string): { connectionString: string; table: string; prefix: string } {
  const url = new URL(backendUrl);
  const table = url.searchParams.get('table') || 'pulumi_state';
  if (!TABLE_NAME.test(table)) throw new Error(`PULUMI_BACKEND_URL: the table "${table}" is not a plain lower-case name`);
  url.searchParams.delete('table');
  const path = decodeURIComponent(url.pathname).replace(/^\/+/, '');
  return { connectionString: url.toString(), table, prefix: path && !path.endsWith('/') ? `${path}/` : path };
}

const pools = new Map<string, pg.Pool>();
function poolFor(connectionString: string): pg.Pool {
  let pool = pools.get(connectionString);
  if (!pool) {
    // Idle, it holds no connection and keeps no process alive; a connection lost meanwhile is replaced at next use.
    pool = new pg.Pool({ connectionString, max: 2, idleTimeoutMillis: 5000, allowExitOnIdle: true });
    pool.on('error', () => undefined);
    pools.set(connectionString, pool);
  }
  return pool;
}

/** The CLI's own schema (backend/diy/postgres/schema.sql), made once per process when missing (Kiln's migrations make it in Kiln's database). */
const schema = (table: string) => `create table if not exists ${table} (key text primary key, data json not null, updated_at timestamp with time zone not null default now());
create index if not exists ${table}_key_prefix_idx on ${table} (key text_pattern_ops);`;
const ensured = new Map<string, Promise<unknown>>();
function ensureTable(pool: pg.Pool, key: string, table: string): Promise<unknown> {
  if (!ensured.has(key)) {
    // Two processes making it at once: one of them is told it exists (a duplicate in the catalog); then it does.
    const made = pool.query(schema(table)).catch((error: { code?: string }) => {
      if (error.code !== '23505' && error.code !== '42P07') throw error;
    });
    ensured.set(key, made);
    made.catch(() => ensured.delete(key));
  }
  return ensured.get(key)!;
}

const likePrefix = (text: string) => `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function stateTable(backendUrl: string): StateFiles {
  const { connectionString, table, prefix } = stateTableOf(backendUrl);
  const query = async <Row extends pg.QueryResultRow>(sql: string, values: unknown[]) => {
    const pool = poolFor(connectionString);
    await ensureTable(pool, `${connectionString} ${table}`, table);
    return pool.query<Row>(sql, values);
  };
  return {
    async read(path) {
      const { rows } = await query<{ data: string }>(`select data->>'data' as data from ${table} where key = $1`, [prefix + path]);
      return rows[0] && Buffer.from(rows[0].data, 'base64');
    },
    async exists(path) {
      return (await query(`select 1 from ${table} where key = $1`, [prefix + path])).rowCount === 1;
    },
    async write(path, contents) {
      const data = JSON.stringify({ data: Buffer.from(contents).toString('base64') });
      await query(`insert into ${table} (key, data) values ($1, $2) on conflict (key) do update set data = $2, updated_at = now()`, [prefix + path, data]);
    },
    async list(folder) {
      const { rows } = await query<{ key: string }>(`select key from ${table} where key like $1 order by key`, [likePrefix(prefix + folder)]);
      return rows.map((row) => row.key.slice(prefix.length));
    },
    async remove(paths) {
      await query(`delete from ${table} where key = any($1)`, [paths.map((path) => prefix + path)]);
    },
  };
}

/**
 * A `postgres://` backend URL without its password, and the password apart (PGPASSWORD, which the CLI's driver
 * reads): the URL goes into each workspace's Pulumi.yaml, and the CLI quotes it in its errors, which become
 * deployments' failure reasons. Other URLs as they are.
 */
export function passwordApart(backendUrl: string): { url: string; password?: string } {
  if (!backendUrl.startsWith('postgres://')) return { url: backendUrl };
  const url = new URL(backendUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  return password ? { url: url.toString(), password } : { url: backendUrl };
}
