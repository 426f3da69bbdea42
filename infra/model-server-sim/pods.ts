// What the simulator reads from a vLLM pod: whether it should be answering (Ready, with an IP, not going
// away), and how (model, port and context length from the container's vLLM arguments; speed and batch size
// from annotations, else the simulator's defaults).
import { join } from 'node:path';
import { VLLM_PORT } from '../../catalog/model-server.ts';
import type { KubeObject } from '../../lib/kubernetes/watch.ts';
import type { EngineTiming } from './engine.ts';
import type { ModelServerConfig } from './model-server.ts';

/** Per-pod overrides of the simulator's defaults. */
export const SIM_ANNOTATIONS = {
  ttftMs: 'sim.kiln.dev/ttft-ms',
  tokenMs: 'sim.kiln.dev/token-ms',
  maxConcurrency: 'sim.kiln.dev/max-concurrency',
  /** "true": kwok crash-loops the pod instead of making it Ready (infra/servers/kwok-stages.ts). */
  fail: 'sim.kiln.dev/fail',
} as const;

export interface SimDefaults extends EngineTiming {
  /** Context length when the pod's args name none (vLLM would read the model's config). */
  readonly maxModelLen: number;
  readonly statsIntervalMs: number;
}

export const DEFAULT_SIM_SETTINGS: SimDefaults = { ttftMs: 50, tokenMs: 10, maxConcurrency: 8, maxModelLen: 8192, statsIntervalMs: 10_000 };

/** vLLM's model when --model is not given. */
const VLLM_DEFAULT_MODEL = 'facebook/opt-125m';

export interface Pod extends KubeObject {
  metadata?: KubeObject['metadata'] & { uid?: string; annotations?: Record<string, string>; deletionTimestamp?: string };
  spec?: { nodeName?: string; containers?: { name: string; image?: string; args?: string[]; command?: string[] }[] };
  status?: {
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; restartCount?: number; state?: { waiting?: { reason?: string } } }[];
  };
}

export const podKey = (pod: Pod) => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;

/** The container running vLLM: the one named `vllm`, else the first. */
export function vllmContainer(pod: Pod) {
  const containers = pod.spec?.containers ?? [];
  return containers.find((c) => c.name === 'vllm') ?? containers[0];
}

/**
 * A pod's server should be up: it runs on a node (kwok's), is Ready, has an IP and is not being deleted. (A pod
 * whose status someone wrote by hand, never scheduled, is not the simulator's to serve.)
 */
export function shouldServe(pod: Pod): boolean {
  return !pod.metadata?.deletionTimestamp && !!pod.spec?.nodeName && !!pod.status?.podIP
    && (pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);
}

const ipv4 = (ip: string) => {
  const parts = ip.split('.').map(Number);
  return parts.length === 4 && parts.every((p) => Number.isInteger(p) && p >= 0 && p <= 255) ? parts.reduce((n, p) => n * 256 + p, 0) : undefined;
};

/** Whether an IPv4 address is inside a CIDR range such as `127.64.0.0/16`. */
export function inCidr(ip: string, cidr: string): boolean {
  const [base = '', bits = ''] = cidr.split('/');
  const [address, network, prefix] = [ipv4(ip), ipv4(base), Number(bits)];
  if (address === undefined || network === undefined || !(prefix >= 0 && prefix <= 32)) return false;
  const size = 2 ** (32 - prefix);
  return Math.floor(address / size) === Math.floor(network / size);
}

/** The value of each `--flag value` / `--flag=value`; a flag given again adds a value. */
function parseFlags(args: readonly string[]): Map<string, string[]> {
  const flags = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) continue;
    const [flag, inline] = arg.split(/=(.*)/s, 2) as [string, string | undefined];
    const values: string[] = [];
    if (inline !== undefined) values.push(inline);
    // --served-model-name takes several values; every other flag one.
    else while (i + 1 < args.length && !args[i + 1]!.startsWith('--') && (values.length === 0 || flag === '--served-model-name')) values.push(args[++i]!);
    flags.set(flag, [...(flags.get(flag) ?? []), ...values]);
  }
  return flags;
}

const positive = (value: string | undefined): number | undefined => {
  const n = Number(value);
  return value !== undefined && value.trim() !== '' && Number.isFinite(n) && n >= 0 ? n : undefined;
};

/** The vLLM version an image tag names (`vllm/vllm-openai:v0.11.0` -> 0.11.0), else the one Kiln pins. */
function versionOf(image: string | undefined): string {
  return /:v?(\d+\.\d+\.\d+[\w.+-]*)$/.exec(image ?? '')?.[1] ?? '0.11.0';
}

/** How to run the server of a pod that should serve. */
export function serverConfig(pod: Pod, defaults: SimDefaults, logDir: string): ModelServerConfig {
  const container = vllmContainer(pod);
  const args = [...(container?.command ?? []), ...(container?.args ?? [])];
  const flags = parseFlags(args);
  const first = (flag: string) => flags.get(flag)?.[0];
  // `vllm serve MODEL` names the model without --model.
  const serveAt = args.indexOf('serve');
  const positional = serveAt >= 0 && args[serveAt + 1] && !args[serveAt + 1]!.startsWith('--') ? args[serveAt + 1] : undefined;
  const annotations = pod.metadata?.annotations ?? {};
  const annotated = (key: string) => positive(annotations[key]);
  return {
    host: pod.status!.podIP!,
    port: positive(first('--port')) ?? VLLM_PORT, // vLLM's default
    model: first('--model') ?? positional ?? VLLM_DEFAULT_MODEL,
    servedModelNames: flags.get('--served-model-name') ?? [],
    maxModelLen: positive(first('--max-model-len')) ?? defaults.maxModelLen,
    tensorParallelSize: positive(first('--tensor-parallel-size')) ?? 1,
    version: versionOf(container?.image),
    timing: {
      ttftMs: annotated(SIM_ANNOTATIONS.ttftMs) ?? defaults.ttftMs,
      tokenMs: annotated(SIM_ANNOTATIONS.tokenMs) ?? defaults.tokenMs,
      maxConcurrency: Math.max(1, Math.floor(annotated(SIM_ANNOTATIONS.maxConcurrency) ?? defaults.maxConcurrency)),
    },
    logFile: podLogFile(logDir, pod),
    statsIntervalMs: defaults.statsIntervalMs,
  };
}

/** Where the log of a pod's vLLM container is kept: laid out as the kubelet's /var/log/pods. */
export function podLogFile(logDir: string, pod: Pod): string {
  const { namespace = 'default', name = 'pod', uid = 'uid' } = pod.metadata ?? {};
  return join(logDir, `${namespace}_${name}_${uid}`, `${vllmContainer(pod)?.name ?? 'vllm'}.log`);
}
