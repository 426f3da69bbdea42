// What Kiln on Kubernetes is made of: the component's arguments, their resolved form, and the rules they follow
// (the ones Kiln's processes would otherwise refuse at start-up, crash-looping their pods).
import type * as k8s from '@pulumi/kubernetes';
import type * as pulumi from '@pulumi/pulumi';
import { NAME_PATTERN } from '../../catalog/deployment-rules.ts';
import { StackArgsError } from '../args-error.ts';
import { KILN_PROCESSES, SECRET_SETTINGS, WORKER_METRICS_PORT, type KilnProcessName, type SecretArg } from './processes.ts';

type Resources = k8s.types.input.core.v1.ResourceRequirements;

export interface KilnOnKubernetesArgs {
  /** Kiln's image, built from the repository's Dockerfile, e.g. `registry.example.com/kiln:0.1.0`. */
  readonly image: pulumi.Input<string>;
  /** Namespace the objects live in (it must exist); `default` when absent. */
  readonly namespace?: pulumi.Input<string>;
  /** Pods of each process. Any number of each runs: they share nothing but PostgreSQL and Temporal. */
  readonly replicas: { readonly api: pulumi.Input<number>; readonly worker: pulumi.Input<number>; readonly gateway: pulumi.Input<number> };
  /** KILN_ENV, a plain value since it decides what else is required: `production` (the default: live API keys; webhook, sign-on and cluster addresses on private networks refused) or `development`. */
  readonly environment?: 'production' | 'development';
  /** The external PostgreSQL, `postgres://user:pass@host:5432/kiln`; kept in the Secret (it holds the password). */
  readonly databaseUrl: pulumi.Input<string>;
  /** host:port of the external Temporal frontend. */
  readonly temporalAddress: pulumi.Input<string>;
  /** KILN_SIGNING_KEY, at least 32 characters: the API and the gateways must share it. */
  readonly signingKey: pulumi.Input<string>;
  /** PULUMI_CONFIG_PASSPHRASE: encrypts the secrets of the stacks the workers run; every worker needs the same. */
  readonly pulumiPassphrase: pulumi.Input<string>;
  /** KILN_METRICS_TOKEN, at least 32 characters: with it, every process serves GET /metrics/internal to a scraper holding it. */
  readonly metricsToken?: pulumi.Input<string>;
  /** SMTP_URL, `smtp://user:pass@host:587`: the API's outgoing mail; required in production. */
  readonly smtpUrl?: pulumi.Input<string>;
  /**
   * Further settings for every process (docs/reference/configuration.md), e.g. `KILN_PUBLIC_URL`, `PROMETHEUS_URL`.
   * Plain values: the component's own settings and the secret ones are refused here.
   */
  readonly env?: Readonly<Record<string, pulumi.Input<string>>>;
  /** Further secret settings for every process (`STRIPE_SECRET_KEY`, `KILN_SECRETS_KEY`...), kept in the Secret; give them as `pulumi.secret(...)`. */
  readonly secretEnv?: Readonly<Record<string, pulumi.Input<string>>>;
  /** Requests and limits per process; DEFAULT_RESOURCES for those not given. */
  readonly resources?: Partial<Readonly<Record<KilnProcessName, pulumi.Input<Resources>>>>;
}

/**
 * Room for each process at a modest load. The worker runs Pulumi operations (about a core each, KILN_PULUMI_CONCURRENCY
 * at once); the gateway relays streams and needs little. Memory is limited, CPU is not: a throttled process answers probes late.
 */
export const DEFAULT_RESOURCES: Readonly<Record<KilnProcessName, Resources>> = {
  api: { requests: { cpu: '250m', memory: '512Mi' }, limits: { memory: '1Gi' } },
  worker: { requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '4Gi' } },
  gateway: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
};

/** Settings the component sets itself, by the argument that sets them. */
const OWN_SETTINGS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(SECRET_SETTINGS).map(([arg, variable]) => [variable, arg])),
  TEMPORAL_ADDRESS: 'temporalAddress',
  KILN_ENV: 'environment',
  ...Object.fromEntries(Object.values(KILN_PROCESSES).flatMap((p) => (p.port ? [[p.port.env, 'the component (the container port)']] : []))),
  [WORKER_METRICS_PORT.env]: 'the component (the container port)',
  DATA_DIR: 'the component (a volume of each pod)',
};

/** Kiln's settings that hold secrets beyond the component's own: they belong in secretEnv, never in a pod's plain env. */
const OTHER_SECRET_SETTINGS: readonly string[] = [
  'KILN_SECRETS_KEY', 'KILN_SECRETS_PREVIOUS_KEYS', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'STRIPE_BILLING_WEBHOOK_SECRET',
  'KILN_HF_TOKEN', 'PULUMI_BACKEND_URL', 'ERROR_TRACKER_URL',
];

/** The plain arguments once known, defaults applied and every rule checked. */
export interface KilnSpec {
  readonly name: string;
  readonly namespace: string;
  readonly image: string;
  readonly environment: 'production' | 'development';
  readonly temporalAddress: string;
  readonly replicas: Readonly<Record<KilnProcessName, number>>;
  readonly env: Readonly<Record<string, string>>;
  readonly resources: Readonly<Record<KilnProcessName, pulumi.Unwrap<Resources>>>;
}

export type PlainArgs = Omit<KilnOnKubernetesArgs, SecretArg | 'secretEnv'>;

const isKnown = <T>(value: pulumi.Input<T> | undefined): value is T => typeof value !== 'object' || value === null || (!('apply' in value) && !(value instanceof Promise));

/** The rules whose arguments are plain values already, so a broken one fails construction rather than the up. */
export function checkKnownArgs(args: KilnOnKubernetesArgs): void {
  if (isKnown(args.temporalAddress)) checkTemporalAddress(args.temporalAddress);
  for (const [process, count] of Object.entries(args.replicas)) if (isKnown(count)) checkReplicas(process, count);
  checkEnvNames(Object.keys(args.env ?? {}), Object.keys(args.secretEnv ?? {}));
  if ((args.environment ?? 'production') === 'production' && args.smtpUrl === undefined) {
    throw new StackArgsError('smtpUrl is required in production: the API refuses to start without outgoing mail (it would log invitation links)');
  }
}

/** `name`, the component's, starts every object's name. */
export function kilnSpec(name: string, args: pulumi.Unwrap<PlainArgs>): KilnSpec {
  const replicas = { api: args.replicas.api, worker: args.replicas.worker, gateway: args.replicas.gateway };
  for (const [process, count] of Object.entries(replicas)) checkReplicas(process, count);
  const environment = args.environment ?? 'production';
  if (environment !== 'production' && environment !== 'development') throw new StackArgsError(`environment must be production or development, got "${String(environment)}"`);
  return {
    name: checkName(name),
    namespace: args.namespace ?? 'default',
    image: args.image,
    environment,
    temporalAddress: checkTemporalAddress(args.temporalAddress),
    replicas,
    env: args.env ?? {},
    resources: {
      api: args.resources?.api ?? DEFAULT_RESOURCES.api,
      worker: args.resources?.worker ?? DEFAULT_RESOURCES.worker,
      gateway: args.resources?.gateway ?? DEFAULT_RESOURCES.gateway,
    } as KilnSpec['resources'],
  };
}

/** Longest component name whose objects' names (`<name>-gateway`, the longest) stay DNS labels. */
const MAX_NAME_LENGTH = 63 - '-gateway'.length;

export function checkName(name: string): string {
  if (!NAME_PATTERN.test(name) || name.length > MAX_NAME_LENGTH) {
    throw new StackArgsError(`name "${name}" must be a DNS label of at most ${MAX_NAME_LENGTH} characters: lowercase letters, digits and '-', starting with a letter`);
  }
  return name;
}

export function checkReplicas(process: string, count: number): number {
  if (!Number.isInteger(count) || count < 0) throw new StackArgsError(`replicas.${process} must be a whole number of pods, 0 or more, got ${count}`);
  return count;
}

export function checkTemporalAddress(address: string): string {
  if (!/^[^\s/:]+:\d+$/.test(address)) throw new StackArgsError(`temporalAddress must be host:port, got "${address}"`);
  return address;
}

/** Each name an environment variable's, neither one the component sets nor, in `env`, a secret. */
export function checkEnvNames(plain: readonly string[], secret: readonly string[]): void {
  for (const variable of [...plain, ...secret]) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) throw new StackArgsError(`"${variable}" must be an environment variable name: letters, digits and '_', not starting with a digit`);
    const owner = OWN_SETTINGS[variable];
    if (owner) throw new StackArgsError(`${variable} is set by ${owner}, not through env or secretEnv`);
  }
  for (const variable of plain) {
    if (OTHER_SECRET_SETTINGS.includes(variable)) throw new StackArgsError(`${variable} holds a secret: give it in secretEnv, which keeps it in the Secret`);
    if (secret.includes(variable)) throw new StackArgsError(`${variable} is in both env and secretEnv`);
  }
}

/**
 * A secret setting's value, checked as the process would at start-up. The message never holds the value: it
 * would reach the up's output and the logs.
 */
export function checkSecretValue(arg: SecretArg, value: string): string {
  const problem = {
    databaseUrl: /^postgres(ql)?:\/\/[^\s]+$/.test(value) ? undefined : 'must be a postgres:// URL',
    signingKey: value.length >= 32 ? undefined : 'must be at least 32 characters',
    metricsToken: value.length >= 32 ? undefined : 'must be at least 32 characters',
    smtpUrl: /^smtps?:\/\/[^\s]+$/.test(value) ? undefined : 'must be an smtp:// or smtps:// URL',
    pulumiPassphrase: value.length > 0 ? undefined : 'must not be empty',
  }[arg];
  if (problem) throw new StackArgsError(`${arg} ${problem}`);
  return value;
}
