// The Temporal dev server (`temporal server start-dev`): SQLite file under the data folder, Web UI, and
// Kiln's search attributes registered. TEMPORAL_ADDRESS replaces it with an existing server.
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../../workflows/contract/search-attributes.ts';
import { binaryPath } from '../tools/paths.ts';
import { startProcess, waitUntilReady } from './process.ts';

export interface TemporalServer {
  /** host:port of the frontend (gRPC). */
  readonly address: string;
  /** Web UI address, when this process started the server. */
  readonly uiUrl?: string;
  stop(): Promise<void>;
}

const SEARCH_ATTRIBUTE_TYPE: Record<string, string> = { KEYWORD: 'Keyword', TEXT: 'Text', INT: 'Int', DOUBLE: 'Double', BOOL: 'Bool', DATETIME: 'Datetime', KEYWORD_LIST: 'KeywordList' };

/** A dev server this process started: it can also be killed (SIGKILL), as a crash would end it. */
export interface LocalTemporalServer extends TemporalServer {
  kill(): Promise<void>;
}

export async function startTemporal(options: { dataDir: string; port: number; uiPort: number }): Promise<LocalTemporalServer> {
  const address = `127.0.0.1:${options.port}`;
  // The dev server picks its other ports (history, matching, metrics, HTTP) itself, by asking the kernel for a
  // free one and letting it go; a process starting at the same moment can take one first, and the dev server
  // then exits with a panic. A fresh start picks again (waitUntilReady puts the log's end in the error).
  for (let attempt = 1; ; attempt++) {
    const server = await startProcess('temporal', binaryPath('temporal'), [
      'server', 'start-dev',
      '--ip', '127.0.0.1',
      '--port', String(options.port),
      '--ui-port', String(options.uiPort),
      '--db-filename', join(options.dataDir, 'temporal.sqlite'),
      '--log-level', 'warn',
      ...SEARCH_ATTRIBUTES.flatMap((key) => ['--search-attribute', `${key.name}=${SEARCH_ATTRIBUTE_TYPE[key.type]}`]),
    ], { logFile: join(options.dataDir, 'logs', 'temporal.log') });
    try {
      await waitUntilReady(server, () => isServing(address));
      return { address, uiUrl: `http://127.0.0.1:${options.uiPort}`, stop: () => server.stop(), kill: () => server.kill() };
    } catch (error) {
      const exited = server.child.exitCode !== null || server.child.signalCode !== null;
      await server.stop();
      if (!exited || attempt === 3) throw error;
    }
  }
}

export function externalTemporal(address: string): TemporalServer {
  return { address, stop: async () => {} };
}

async function isServing(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 1000 });
  try {
    await connection.workflowService.getSystemInfo({});
    return true;
  } finally {
    await connection.close();
  }
}
