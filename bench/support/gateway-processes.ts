// Inference gateways as the benches run them: each its own process (`node gateway/main.ts`, as `npm run gateway`
// starts it) on the bench API's database, so its CPU is its own and none of the bench's client work lands on
// its event loop. The CPU each has used is read from /proc (user + system).
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { freePort, startProcess, waitUntilReady } from '../../infra/servers/process.ts';
import type { BenchApi } from './bench-api.ts';

export interface GatewayProcess {
  readonly url: string;
  /** CPU seconds the process has used so far. */
  cpuSeconds(): Promise<number>;
  stop(): Promise<void>;
}

const CLOCK_TICKS = 100;

async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

export async function startGatewayProcess(api: BenchApi): Promise<GatewayProcess> {
  const port = await freePort();
  const gateway = await startProcess('inference gateway', process.execPath, [resolve(import.meta.dirname, '../../gateway/main.ts')], {
    env: {
      ...process.env, DATABASE_URL: api.databaseUrl, KILN_SIGNING_KEY: api.signingKey, KILN_GATEWAY_PORT: String(port),
      LOG_LEVEL: 'warn', TEMPORAL_ADDRESS: '127.0.0.1:7233',
    },
    logFile: join(process.env.DATA_DIR ?? '.data', 'bench', 'logs', `gateway-${port}.log`),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(gateway, async () => (await fetch(`${url}/v1/health/live`)).ok, 30_000);
  return { url, cpuSeconds: () => cpuSecondsOf(gateway.child.pid!), stop: gateway.stop };
}
