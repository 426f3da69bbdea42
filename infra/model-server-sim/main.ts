// The model server simulator as a process, one per local cluster (infra/servers/gpu-cluster.ts starts it):
//   node infra/model-server-sim/main.ts --kubeconfig FILE --log-dir DIR [--pod-cidr 127.64.0.0/16] [--kwok-logs]
//     [--ttft-ms 50] [--token-ms 10] [--max-concurrency 8] [--max-model-len 8192] [--stats-interval-ms 10000]
// It stands in for vLLM on a laptop; a real cluster runs vLLM itself. SIGTERM or SIGINT stops it.
import { parseArgs } from 'node:util';
import { credentialsFromKubeconfig, kubeApi } from '../../lib/kubernetes/api.ts';
import type { SimDefaults } from './pods.ts';
import { startModelServerSim } from './sim.ts';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    'log-dir': { type: 'string' },
    'pod-cidr': { type: 'string' },
    'kwok-logs': { type: 'boolean', default: false },
    'ttft-ms': { type: 'string' },
    'token-ms': { type: 'string' },
    'max-concurrency': { type: 'string' },
    'max-model-len': { type: 'string' },
    'stats-interval-ms': { type: 'string' },
  },
});
if (!values.kubeconfig || !values['log-dir']) {
  console.error('usage: node infra/model-server-sim/main.ts --kubeconfig FILE --log-dir DIR [--pod-cidr CIDR] [--kwok-logs] [--ttft-ms N] [--token-ms N] [--max-concurrency N] [--max-model-len N] [--stats-interval-ms N]');
  process.exit(2);
}

const numbers: [keyof SimDefaults, string | undefined][] = [
  ['ttftMs', values['ttft-ms']], ['tokenMs', values['token-ms']], ['maxConcurrency', values['max-concurrency']],
  ['maxModelLen', values['max-model-len']], ['statsIntervalMs', values['stats-interval-ms']],
];
const defaults: Partial<Record<keyof SimDefaults, number>> = {};
for (const [key, text] of numbers) {
  if (text === undefined) continue;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) { console.error(`${key}: not a number: ${text}`); process.exit(2); }
  defaults[key] = n;
}

const say = (line: string) => console.log(`${new Date().toISOString()} ${line}`);
const sim = startModelServerSim({
  api: kubeApi(await credentialsFromKubeconfig(values.kubeconfig)),
  logDir: values['log-dir'],
  podCidr: values['pod-cidr'],
  defaults,
  kwokLogs: values['kwok-logs'],
  say,
});
await sim.synced.then(() => say('watching vLLM pods'), (error: Error) => say(`first list of pods failed (retrying): ${error.message}`));

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    void sim.stop().then(() => process.exit(0));
  });
}
