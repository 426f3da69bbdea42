// Kiln's door to the Pulumi Automation API: one stack and one workspace folder per deployment or cluster,
// inline programs from stacks/, the pinned Pulumi CLI from the tools cache, a file or cloud state backend.
import { mkdir } from 'node:fs/promises';
import { LocalWorkspace, PulumiCommand, type PulumiFn, type Stack } from '@pulumi/pulumi/automation/index.js';
import { pulumiEnv } from '../../infra/tools/pulumi-plugins.ts';
import { toolDir } from '../../infra/tools/paths.ts';

export interface PulumiSettings {
  /** State backend, e.g. `file:///var/lib/kiln/pulumi-state` or `s3://bucket`. */
  readonly backendUrl: string;
  /** Encrypts stack secrets with the passphrase secrets provider. */
  readonly passphrase: string;
  /** Parent of the per-stack workspace folders. */
  readonly workspacesDir: string;
}

export interface StackRequest {
  readonly project: string;
  readonly stackName: string;
  readonly program: PulumiFn;
  /** Stack configuration, `namespace:key` to value. */
  readonly config?: Readonly<Record<string, { value: string; secret?: boolean }>>;
}

let command: Promise<PulumiCommand> | undefined;
/** The pinned CLI, checked once per process. */
const pulumiCommand = () => (command ??= PulumiCommand.get({ root: toolDir('pulumi') }));

export async function openStack(settings: PulumiSettings, request: StackRequest): Promise<Stack> {
  if (settings.backendUrl.startsWith('file://')) await mkdir(new URL(settings.backendUrl).pathname, { recursive: true });
  const workDir = `${settings.workspacesDir}/${request.project}/${request.stackName}`;
  await mkdir(workDir, { recursive: true });
  const stack = await LocalWorkspace.createOrSelectStack(
    { projectName: request.project, stackName: request.stackName, program: request.program },
    {
      workDir,
      pulumiCommand: await pulumiCommand(),
      secretsProvider: 'passphrase',
      projectSettings: { name: request.project, runtime: 'nodejs', backend: { url: settings.backendUrl } },
      envVars: { ...pulumiEnv(), PULUMI_BACKEND_URL: settings.backendUrl, PULUMI_CONFIG_PASSPHRASE: settings.passphrase },
    },
  );
  if (request.config) await stack.setAllConfig({ ...request.config });
  return stack;
}
