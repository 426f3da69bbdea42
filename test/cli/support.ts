// Runs the `kiln` command line as a user's shell would: a process of its own (no terminal), its own
// configuration directory, against a Kiln given by --server / KILN_SERVER.
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../..', import.meta.url).pathname;
const NODE = join(ROOT, 'node_modules/node/bin/node');
const KILN = join(ROOT, 'client/cli/kiln.js');

export interface CliRun { code: number; stdout: string; stderr: string }

export interface Cli {
  /** The user's configuration directory (XDG_CONFIG_HOME). */
  readonly home: string;
  run(args: readonly string[], options?: { input?: string; env?: Record<string, string> }): Promise<CliRun>;
  /** The same, with what it has written so far readable while it runs. */
  start(args: readonly string[], options?: { input?: string; env?: Record<string, string> }): { output(): CliRun; done: Promise<CliRun> };
}

/** A user of the CLI with a fresh configuration directory, talking to `server`. */
export async function cliUser(server: string): Promise<Cli> {
  const home = await mkdtemp(join(tmpdir(), 'kiln-cli-'));
  const start: Cli['start'] = (args, options = {}) => {
    const env: Record<string, string | undefined> = { ...process.env, KILN_API_KEY: undefined, KILN_PROFILE: undefined, KILN_ORG: undefined };
    Object.assign(env, { XDG_CONFIG_HOME: home, HOME: home, KILN_SERVER: server, KILN_CLI_POLL_MS: '200' }, options.env);
    for (const name of Object.keys(env)) if (env[name] === undefined) delete env[name];
    const child = spawn(NODE, [KILN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const seen = { code: -1, stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => { seen.stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { seen.stderr += chunk.toString(); });
    child.stdin.end(options.input ?? '');
    const done = new Promise<CliRun>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve({ ...seen, code: code ?? -1 }));
    });
    return { output: () => ({ ...seen }), done };
  };
  return { home, run: (args, options) => start(args, options).done, start };
}
