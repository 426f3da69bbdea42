// Prometheus, the time-series store behind Kiln's metric routes: it finds the model servers by Kubernetes pod
// discovery (role pod) with each cluster's kubeconfig and scrapes vLLM's /metrics on port 8000, and scrapes
// Kiln's own /metrics/internal with the internal token. PROMETHEUS_URL replaces it with an existing server.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPLOYMENT_LABEL, VLLM_APP_LABEL, VLLM_PORT } from '../../catalog/model-server.ts';
import { binaryPath } from '../tools/paths.ts';
import { startProcess, waitUntilReady } from './process.ts';

export interface PrometheusServer {
  /** http://127.0.0.1:<port>: its HTTP API (/api/v1/query, /api/v1/query_range). */
  readonly url: string;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  readonly dataDir: string;
  readonly port: number;
  /** Kubeconfig files of the GPU clusters whose model-server pods are scraped. */
  readonly kubeconfigs: readonly string[];
  /** Kiln processes' /metrics/internal (host:port each) and the token they ask for. */
  readonly kiln?: { readonly targets: readonly string[]; readonly token: string };
  /** How often everything is scraped; 5 s when absent (a laptop's load shows up at once). */
  readonly scrapeIntervalSeconds?: number;
}

/** Prometheus's name for a pod label in discovery: every character outside [a-zA-Z0-9_] becomes `_`. */
const podLabel = (key: string) => `__meta_kubernetes_pod_label_${key.replace(/[^a-zA-Z0-9_]/g, '_')}`;

/** The labels a model server's series carry, from its pod: the deployment's name, namespace and pod. */
const POD_LABELS: ReadonlyArray<[meta: string, label: string]> = [
  ['__meta_kubernetes_namespace', 'namespace'],
  ['__meta_kubernetes_pod_name', 'pod'],
  [podLabel(DEPLOYMENT_LABEL), 'deployment'],
];

/** The scrape configuration (JSON is YAML, which Prometheus reads). */
export function prometheusConfig(options: PrometheusOptions, tokenFile: string) {
  const interval = `${options.scrapeIntervalSeconds ?? 5}s`;
  return {
    global: { scrape_interval: interval, evaluation_interval: interval },
    scrape_configs: [
      ...options.kubeconfigs.map((kubeconfig, i) => ({
        job_name: `vllm-${i}`,
        kubernetes_sd_configs: [{ role: 'pod', kubeconfig_file: kubeconfig }],
        relabel_configs: [
          // vLLM pods of Kiln's stack only, on their server port.
          { source_labels: [podLabel(VLLM_APP_LABEL.key)], regex: VLLM_APP_LABEL.value, action: 'keep' },
          { source_labels: ['__meta_kubernetes_pod_ip'], regex: '(.+)', target_label: '__address__', replacement: `$1:${VLLM_PORT}` },
          ...POD_LABELS.map(([meta, label]) => ({ source_labels: [meta], target_label: label })),
        ],
      })),
      ...(options.kiln ? [{
        job_name: 'kiln',
        metrics_path: '/metrics/internal',
        authorization: { type: 'Bearer', credentials_file: tokenFile },
        static_configs: [{ targets: [...options.kiln.targets] }],
      }] : []),
    ],
  };
}

export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  await mkdir(options.dataDir, { recursive: true });
  const tokenFile = join(options.dataDir, 'kiln-metrics-token');
  await writeFile(tokenFile, options.kiln?.token ?? '', { mode: 0o600 });
  const configFile = join(options.dataDir, 'prometheus.yml');
  await writeFile(configFile, JSON.stringify(prometheusConfig(options, tokenFile), null, 2));
  const url = `http://127.0.0.1:${options.port}`;
  const server = await startProcess('prometheus', binaryPath('prometheus'), [
    `--config.file=${configFile}`,
    `--storage.tsdb.path=${join(options.dataDir, 'tsdb')}`,
    `--web.listen-address=127.0.0.1:${options.port}`,
    // A month's spend is read back from it (GET /v1/deployments/{id}/pricing): keep more than a month.
    '--storage.tsdb.retention.time=40d',
    '--log.level=warn',
  ], { logFile: join(options.dataDir, 'prometheus.log') });
  await waitUntilReady(server, async () => (await fetch(`${url}/-/ready`)).ok);
  return { url, stop: () => server.stop() };
}

export function externalPrometheus(url: string): PrometheusServer {
  return { url: url.replace(/\/$/, ''), stop: async () => {} };
}
