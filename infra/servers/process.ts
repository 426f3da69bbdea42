// Running a server binary as a child process: logs to a file under its data folder, readiness by polling,
// and a stop that asks politely (SIGTERM) before it insists (SIGKILL).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ServerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logFile: string;
  stop(): Promise<void>;
  /** Ends it with SIGKILL (no shutdown, as a crash or an evicted pod) and waits for it to be gone. */
  kill(): Promise<void>;
}

// Whatever ends this process (including another library's exit hook), no server is left behind: one exit hook
// for every server started, rather than one each (a test starting a dozen would trip Node's listener warning).
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});

/** Ends every server this process started at once: for a stop that ran out of time. */
export function killEveryServer(): void {
  for (const child of running) child.kill('SIGKILL');
}

export async function startProcess(name: string, command: string, args: string[], options: { logFile: string; env?: NodeJS.ProcessEnv; cwd?: string }): Promise<ServerProcess> {
  await mkdir(dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (e) => reject(new Error(`${name}: could not start ${command}: ${e.message}`)));
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return {
    name,
    child,
    logFile: options.logFile,
    stop: () => stopChild(child),
    kill: () => killChild(child),
  };
}

async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timedOut = await Promise.race([exited.then(() => false), sleep(graceMs).then(() => true)]);
  if (timedOut) {
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * Polls `check` until it resolves true. Fails early, with the end of the log, if the process exits,
 * and after `timeoutMs` otherwise.
 */
export async function waitUntilReady(server: ServerProcess, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`${server.name} exited (${server.child.exitCode ?? server.child.signalCode}) before it was ready: ${await lastLogLine(server.logFile)} (its log: ${server.logFile})`);
    }
    if (await check().catch(() => false)) return;
    await sleep(200);
  }
  throw new Error(`${server.name} was not ready after ${timeoutMs / 1000}s: ${await lastLogLine(server.logFile)} (its log: ${server.logFile})`);
}

/** The log's last line that reads as an error (else its last line), for a one-line failure. */
async function lastLogLine(file: string): Promise<string> {
  const lines = (await logTail(file, 50)).split('\n').filter((line) => line.trim());
  return (lines.findLast((line) => /error|fatal|panic|fail|refused|in use/i.test(line)) ?? lines.at(-1) ?? 'its log is empty').trim();
}

/**
 * Fails with one line when a port a server of npm start's needs is taken, before anything starts: the server
 * itself would say so only deep in its log. `setting` is what moves it.
 */
export async function ensurePortFree(port: number, server: string, setting: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', (error: NodeJS.ErrnoException) => reject(new Error(error.code === 'EADDRINUSE'
      ? `${server} cannot listen on 127.0.0.1:${port}: the port is in use (an earlier npm start still running?). Stop what holds it, or set ${setting} to a free port`
      : `${server} cannot listen on 127.0.0.1:${port}: ${error.message}`)));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

export async function logTail(file: string, lines = 20): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trim().split('\n').slice(-lines).join('\n');
}

/** A free TCP port on loopback, chosen by the kernel. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
