// Kiln's door to the Pulumi Automation API: one stack and one workspace folder per deployment or cluster,
// inline programs from stacks/, the Pulumi CLI the settings name (or the one on PATH), a PostgreSQL, file or cloud state backend.
import { mkdir, rm } from 'node:fs/promises';
import { ConcurrentUpdateError, LocalWorkspace, PulumiCommand, Stack, type DestroyOptions, type EngineEvent, type OutputMap, type PulumiFn, type UpOptions } from '@pulumi/pulumi/automation/index.js';
import { workerMetrics, type PulumiOutcome } from '../metrics.ts';
import { driftOf, type Drift } from './drift.ts';
import { projectStackStore, type StackStore } from './diy-backend.ts';
import { createOperationPool, type OperationPool } from './operation-pool.ts';
import { encrypterFor, newStackEncrypter } from './passphrase.ts';
import { passwordApart } from './state-table.ts';
import { stackSettingsPath, writeStackSettings, type StackConfig } from './stack-settings.ts';

export interface PulumiSettings {
  /** State backend, e.g. `postgres://kiln@db/kiln?table=pulumi_state`, `file:///var/lib/kiln/pulumi-state` or `s3://bucket`. */
  readonly backendUrl: string;
  /** Encrypts stack secrets with the passphrase secrets provider. */
  readonly passphrase: string;
  /** Parent of the per-stack workspace folders. */
  readonly workspacesDir: string;
  /** Folder the Pulumi CLI is installed in (its `bin/pulumi`); the `pulumi` on PATH when absent. */
  readonly cliRoot?: string;
  /** PULUMI_HOME, where plugins are installed; Pulumi's own default (~/.pulumi) when absent. */
  readonly home?: string;
  /** Operations run at once by this process's operation pool (the first settings used decide); the pool's default when absent. */
  readonly concurrency?: number;
  /** How many operations one operation process runs before it is replaced (1: a fresh process each); the pool's default when absent. */
  readonly operationsPerProcess?: number;
}

/**
 * Go's garbage collector in the Pulumi CLI and the plugins it starts, all short-lived: collecting when the heap
 * reaches 11 times what is live, not twice, spends about an eighth less CPU per operation (a deployment's `up`,
 * CLI and plugin: 0.84 -> 0.74 CPU-seconds, each process about 30 MB larger); GOMEMLIMIT has a process that grows
 * large collect before 1 GiB.
 */
const GO_COLLECTOR = { GOGC: '1000', GOMEMLIMIT: '1GiB' };

/** What every Pulumi process Kiln starts runs with: plugins are installed ahead, never downloaded mid-operation. */
function pulumiEnv(settings: PulumiSettings): Record<string, string> {
  const backend = passwordApart(settings.backendUrl);
  return {
    ...GO_COLLECTOR,
    ...(settings.home && { PULUMI_HOME: settings.home }),
    PULUMI_SKIP_UPDATE_CHECK: 'true',
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: 'false',
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
    PULUMI_BACKEND_URL: backend.url,
    ...(backend.password && { PGPASSWORD: backend.password }),
    PULUMI_CONFIG_PASSPHRASE: settings.passphrase,
  };
}

export interface StackRequest {
  readonly project: string;
  readonly stackName: string;
  readonly program: PulumiFn;
  readonly config?: StackConfig;
  /** A stack made for one `preview` (a dry run of something not created yet): removed once it has answered. */
  readonly ephemeral?: boolean;
}

const commands = new Map<string | undefined, Promise<PulumiCommand>>();
/** The CLI, its version checked against the SDK's once per process and folder. */
function pulumiCommand(root: string | undefined): Promise<PulumiCommand> {
  if (!commands.has(root)) commands.set(root, PulumiCommand.get(root ? { root } : {}));
  return commands.get(root)!;
}

/**
 * Opens the request's stack, making it when missing. On a PostgreSQL or file backend Kiln writes a new stack's state
 * and the stack's config itself (diy-backend.ts, stack-settings.ts), so opening runs no CLI at all; every command names
 * its stack, so selecting one only checked it exists. Elsewhere one CLI run (`pulumi stack select --create`)
 * opens or makes it, where the Automation API makes one to select and a second to create, and `pulumi config
 * set-all` sets its config.
 */
export async function openStack(settings: PulumiSettings, request: StackRequest): Promise<Stack> {
  const store = await projectStackStore(settings.backendUrl);
  const workDir = `${settings.workspacesDir}/${request.project}/${request.stackName}`;
  await mkdir(workDir, { recursive: true });
  const command = await pulumiCommand(settings.cliRoot);
  const workspace = await LocalWorkspace.create({
    workDir,
    program: request.program,
    pulumiCommand: command,
    secretsProvider: 'passphrase',
    projectSettings: { name: request.project, runtime: 'nodejs', backend: { url: passwordApart(settings.backendUrl).url } },
    envVars: pulumiEnv(settings),
  });
  if (store) {
    await writeStackFiles(store, settings, request, { workspace, cliVersion: `v${command.version}` });
    workspace.selectStack = async () => undefined;
  } else {
    const cli = workspace as unknown as { runPulumiCmd(args: string[]): Promise<unknown> };
    workspace.selectStack = async (name) => void await cli.runPulumiCmd(['stack', 'select', '--create', '--secrets-provider', 'passphrase', '--stack', name]);
  }
  const stack = await Stack.select(request.stackName, workspace);
  if (request.config && !store) await stack.setAllConfig({ ...request.config });
  return stack;
}

/**
 * A new stack's settings (this process's salt line, the config) and state, or an existing stack's config under its
 * own salt line. The settings are written first: a worker killed before the state is written left no stack, and
 * the next attempt writes both again.
 */
async function writeStackFiles(store: StackStore, settings: PulumiSettings, request: StackRequest, { workspace, cliVersion }: { workspace: LocalWorkspace; cliVersion: string }): Promise<void> {
  const { project, stackName } = request;
  const held = await store.holds(project, stackName);
  if (held && !request.config) return;
  const saltLine = held ? (await workspace.stackSettings(stackName).catch(() => undefined))?.encryptionSalt : undefined;
  // A held stack whose settings are gone (a new workspace folder) gets a salt line as the CLI would give it one.
  const encrypter = saltLine ? encrypterFor(settings.passphrase, saltLine) : await newStackEncrypter(settings.passphrase);
  await writeStackSettings(stackSettingsPath(workspace.workDir, stackName), encrypter, request.config ?? {});
  if (!held) await store.create({ project, stackName, saltLine: encrypter.saltLine, cliVersion });
}

/** The stack's outputs as an output map, from its root resource's state; undefined when one holds a secret (which events show masked). */
function stackOutputsOf(state: { outputs?: Record<string, unknown> }): OutputMap | undefined {
  const entries = Object.entries(state.outputs ?? {});
  if (entries.some(([, value]) => JSON.stringify(value).includes('[secret]'))) return undefined;
  return Object.fromEntries(entries.map(([key, value]) => [key, { value, secret: false }]));
}

/**
 * The stack without the summary the Automation API reads after every up, refresh and destroy, with one more CLI
 * run each (`pulumi stack history`, about 0.25 CPU-seconds): Kiln uses none.
 */
function withoutSummary(stack: Stack): Stack {
  return Object.assign(stack, { info: async () => undefined });
}

/**
 * `up` with its outputs read from its own events: the Automation API's `up` reads them after every update with
 * two more CLI runs (`pulumi stack output`, masked and shown). Outputs that did not pass by in the events (or
 * hold a secret) are read as the Automation API reads them.
 */
export async function upReadingEvents(stack: Stack, options: UpOptions): Promise<OutputMap> {
  let fromEvents: OutputMap | undefined;
  const readOutputs = stack.outputs.bind(stack);
  Object.assign(withoutSummary(stack), { outputs: async () => fromEvents ?? readOutputs() });
  const onEvent = (event: EngineEvent) => {
    // The root stack's last outputs event has the final say, an unusable one (a secret) included.
    const state = event.resOutputsEvent?.metadata.new;
    if (state?.type === 'pulumi:pulumi:Stack') fromEvents = stackOutputsOf(state);
    options.onEvent?.(event);
  };
  return (await stack.up({ ...options, onEvent })).outputs;
}

/**
 * Removes a stack made for one preview, and its workspace folder. Where Kiln keeps the stacks itself it removes
 * the stack's state (a CLI run, `pulumi stack rm --force`, costs 0.26 to 0.33 CPU-seconds); elsewhere the CLI does.
 */
async function removePreviewedStack(settings: PulumiSettings, request: StackRequest, stack: Stack): Promise<void> {
  const store = await projectStackStore(settings.backendUrl);
  if (store) await store.removePreviewed(request.project, request.stackName);
  else await stack.workspace.removeStack(request.stackName, { force: true });
  await rm(stack.workspace.workDir, { recursive: true, force: true });
}

/**
 * `destroy`, then the stack removed by the same CLI run (`pulumi destroy --remove`: the backend's stack removal,
 * which refuses while resources remain, and the stack's Pulumi.<stack>.yaml). The Automation API removes it with
 * one more run (`pulumi stack rm`, 0.26 to 0.33 CPU-seconds measured: the CLI's start and key derivation). The
 * stack's workspace serves this destroy alone, so every command it runs may carry the flag.
 */
async function destroyRemoving(stack: Stack, options: DestroyOptions): Promise<void> {
  stack.workspace.serializeArgsForOp = async () => ['--remove'];
  await stack.destroy(options);
}

export interface OperationHooks {
  /** Aborts the running Pulumi process (its engine then leaves the stack in a consistent state). */
  readonly signal?: AbortSignal;
  /** Called with each line Pulumi prints, e.g. to heartbeat. */
  readonly onProgress?: (line: string) => void;
  /** Called with each resource step the engine plans or takes (what a `preview` answers). */
  readonly onStep?: (step: PlannedStep) => void;
  /** Called with each declared field an `up` or `refresh` found changed out of band (an `up` then puts it back). */
  readonly onDrift?: (drift: Drift) => void;
}

/** One resource step of an operation: `create`, `update`, `replace`, `delete`, `same`..., on a resource type and name. */
export interface PlannedStep {
  readonly operation: string;
  readonly type: string;
  readonly name: string;
}

/** A program named by module and export, so another process can build it: `module[export](input)`. */
export interface ProgramRef {
  readonly programModule: string;
  readonly programExport: string;
  readonly programInput: unknown;
}

export type StackOperation = 'up' | 'refresh' | 'destroy' | 'preview';
export type IsolatedStackRequest = Omit<StackRequest, 'program'> & ProgramRef;
export interface OperationRequest { settings: PulumiSettings; request: IsolatedStackRequest; operation: StackOperation }
export type OperationMessage =
  | { type: 'progress'; line: string }
  | { type: 'step'; step: PlannedStep }
  | { type: 'drift'; drift: Drift }
  /** `reusable`: it ended cleanly (nothing left unhandled), so the process may run the next operation. */
  | ({ type: 'done'; outputs: OutputMap; reusable: boolean } & OperationCpu)
  | ({ type: 'failed'; message: string; aborted: boolean } & OperationCpu);
/** CPU-seconds since the process's previous answer: loading the operation's program (a fresh process's start and SDKs), then the operation. */
export interface OperationCpu { cpuSeconds: number; loadCpuSeconds: number }

let pool: OperationPool | undefined;
/** The worker's operation processes, made on first use; closePulumiOperations ends the idle ones. */
const operationPool = (settings: PulumiSettings) => (pool ??= createOperationPool(settings));
export function closePulumiOperations(): void {
  pool?.close();
  pool = undefined;
}

/**
 * Runs `up`, `refresh`, `preview` or `destroy` (which also removes the stack) in an operation process (see
 * operation-process.ts, kept warm by operation-pool.ts) and answers with the stack's outputs (none for a preview, whose steps go to onStep, nor for a refresh, which answers its drift).
 * Its duration and outcome go to the worker's metrics (kiln_pulumi_operation_duration_seconds).
 */
export async function runStackOperation(settings: PulumiSettings, request: IsolatedStackRequest, operation: StackOperation, hooks: OperationHooks = {}): Promise<OutputMap> {
  const done = workerMetrics().pulumiOperations.startTimer({ operation });
  try {
    const outputs = await runInProcess(settings, request, operation, hooks);
    done({ outcome: 'succeeded' });
    return outputs;
  } catch (error) {
    done({ outcome: (hooks.signal?.aborted ? 'aborted' : 'failed') satisfies PulumiOutcome });
    throw error;
  }
}

async function runInProcess(settings: PulumiSettings, request: IsolatedStackRequest, operation: StackOperation, hooks: OperationHooks): Promise<OutputMap> {
  // The pool as it is now: released to the same one even if the worker closes it meanwhile.
  const pool = operationPool(settings);
  const lent = await pool.acquire();
  const { child } = lent;
  let reusable = false;
  try {
    if (hooks.signal?.aborted) {
      // Cancelled while it waited its turn: the process did nothing and serves the next one.
      reusable = true;
      throw new Error('the Pulumi operation was cancelled while it waited for its turn');
    }
    return await new Promise<OutputMap>((resolve, reject) => {
      // Settled, this operation stops listening: the process may go on to serve the next one.
      const settle = (finish: () => void) => {
        hooks.signal?.removeEventListener('abort', onAbort);
        child.off('message', onMessage);
        child.off('exit', onExit);
        finish();
      };
      const onAbort = () => { if (child.connected) child.send('abort', () => undefined); };
      const onMessage = (message: OperationMessage) => {
        if (message.type === 'progress') return hooks.onProgress?.(message.line);
        if (message.type === 'step') return hooks.onStep?.(message.step);
        if (message.type === 'drift') return hooks.onDrift?.(message.drift);
        workerMetrics().pulumiCpu.observe({ operation }, message.cpuSeconds);
        workerMetrics().pulumiLoadCpu.inc(message.loadCpuSeconds);
        if (message.type === 'failed') return settle(() => reject(new Error(pulumiErrorSummary(message.message))));
        reusable = message.reusable && !hooks.signal?.aborted;
        settle(() => resolve(message.outputs));
      };
      const onExit = (code: number | null, signal: string | null) =>
        settle(() => reject(new Error(`the Pulumi operation process exited (${code ?? signal}) without an answer: ${lent.stderr().trim()}`)));
      hooks.signal?.addEventListener('abort', onAbort, { once: true });
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ settings, request, operation } satisfies OperationRequest, (error) => {
        if (error) settle(() => reject(new Error(`the Pulumi operation process could not be reached: ${error.message}`)));
      });
    });
  } finally {
    pool.release(lent, reusable);
  }
}

/**
 * The operation itself, in this process. Each stack belongs to one workflow, which runs one operation at a
 * time, so a lock found when an operation starts was left by a worker that died mid-operation: it is
 * cleared and the operation tried once more.
 *
 * An `up` refreshes first: the diff is then taken against what really runs, so a field someone changed out of
 * band is reported as drift and put back, and an object someone deleted is made again (a stack made just now
 * holds nothing, so its refresh reads nothing).
 */
export async function runStackOperationHere(settings: PulumiSettings, request: StackRequest, operation: StackOperation, hooks: OperationHooks = {}): Promise<OutputMap> {
  const stack = withoutSummary(await openStack(settings, request));
  const onEvent = (event: EngineEvent) => { for (const drift of driftOf(event)) hooks.onDrift?.(drift); };
  const options = { onOutput: hooks.onProgress, signal: hooks.signal };
  const run = async () => {
    if (operation === 'up') return upReadingEvents(stack, { ...options, refresh: true, onEvent });
    if (operation === 'preview') {
      try {
        await stack.preview({
          ...options,
          onEvent: (event) => {
            const step = event.resourcePreEvent?.metadata;
            // The stack itself is Pulumi's bookkeeping, not a resource of the program.
            if (step && step.type !== 'pulumi:pulumi:Stack') hooks.onStep?.({ operation: step.op, type: step.type, name: step.urn.split('::').at(-1)! });
          },
        });
      } finally {
        if (request.ephemeral) await removePreviewedStack(settings, request, stack);
      }
      return {};
    }
    if (operation === 'refresh') return (await stack.refresh({ ...options, onEvent }), {});
    await destroyRemoving(stack, options);
    return {};
  };
  try {
    return await run();
  } catch (error) {
    const store = error instanceof ConcurrentUpdateError ? await projectStackStore(settings.backendUrl) : undefined;
    if (!store || !(await store.clearLocks(request.project, request.stackName))) throw error;
    return run();
  }
}

/**
 * The engine's own `error:` lines of a failed operation, once each (the CLI's output repeats them amid the
 * progress display), so a failure reason reads like "no resource plugin 'pulumi-resource-kubernetes' found".
 */
export function pulumiErrorSummary(output: string): string {
  const errors = [...new Set([...output.matchAll(/error: (.+)/g)].map((m) => m[1]!.trim()))]
    .filter((line) => !/^update (failed|canceled)$/.test(line) && !line.startsWith('Command failed'));
  return errors.length ? errors.join('; ').slice(0, 1000) : output.trim().slice(0, 1000);
}
