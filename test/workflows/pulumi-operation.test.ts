// Kiln's Automation API layer against the real Pulumi CLI and a file backend: isolated operations, a stale
// lock left by a dead worker, and an aborted update.
import test from 'ava';
import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closePulumiOperations, pulumiErrorSummary, runStackOperation, type IsolatedStackRequest, type PulumiSettings } from '../../workflows/pulumi/automation.ts';
import { workerMetrics } from '../../workflows/metrics.ts';
import type { TestProgramInput } from './fixtures/test-program.ts';
import { pulumiSettingsIn } from '../support/pulumi.ts';

async function world(): Promise<PulumiSettings & { dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-ops-'));
  return { dir, ...pulumiSettingsIn(dir) };
}

const request = (stackName: string, input: Partial<TestProgramInput> = {}): IsolatedStackRequest => ({
  project: 'kiln-deployment',
  stackName,
  programModule: new URL('./fixtures/test-program.ts', import.meta.url).href,
  programExport: 'testProgram',
  programInput: { name: 'llama', replicas: 2, model: 'meta-llama/Llama-3.1-8B-Instruct', ...input } satisfies TestProgramInput,
});

const stacksOf = async (settings: { dir: string }) =>
  (await readdir(join(settings.dir, 'state', '.pulumi', 'stacks', 'kiln-deployment')).catch(() => [] as string[])).filter((f) => f.endsWith('.json'));

test('up answers with the outputs and destroy removes the stack', async (t) => {
  const settings = await world();
  const progress: string[] = [];
  const outputs = await runStackOperation(settings, request('dep_up'), 'up', { onProgress: (line) => progress.push(line) });
  t.is(outputs.serviceUrl?.value, 'http://llama.test');
  t.is(outputs.replicas?.value, 2);
  t.true(progress.some((line) => line.includes('kiln:test:Deployment')), 'progress lines are relayed');
  t.deepEqual(await stacksOf(settings), ['dep_up.json']);

  await runStackOperation(settings, request('dep_up'), 'destroy');
  t.deepEqual(await stacksOf(settings), []);
});

/** How many operations the worker's histogram holds for these labels, and their summed seconds. */
async function timed(operation: string, outcome: string) {
  const values = (await workerMetrics().pulumiOperations.get()).values.filter((v) => v.labels.operation === operation && v.labels.outcome === outcome);
  const of = (name: string) => values.find((v) => v.metricName === name)?.value ?? 0;
  return { count: of('kiln_pulumi_operation_duration_seconds_count'), sum: of('kiln_pulumi_operation_duration_seconds_sum') };
}

// Alone (serial): the other tests' operations would move the process's histogram.
test.serial('each operation\'s duration is measured by operation and outcome', async (t) => {
  const settings = await world();
  const before = { up: await timed('up', 'succeeded'), failed: await timed('up', 'failed'), destroy: await timed('destroy', 'succeeded') };
  await runStackOperation(settings, request('dep_timed'), 'up');
  await t.throwsAsync(runStackOperation(settings, request('dep_timed', { failWith: 'the API server refused the Deployment' }), 'up'));
  await runStackOperation(settings, request('dep_timed'), 'destroy');
  const up = await timed('up', 'succeeded');
  t.is(up.count - before.up.count, 1);
  // At least the time Pulumi takes to start an engine.
  t.true(up.sum - before.up.sum > 0.1, `${up.sum - before.up.sum} s`);
  t.is((await timed('up', 'failed')).count - before.failed.count, 1);
  t.is((await timed('destroy', 'succeeded')).count - before.destroy.count, 1);
});

// Alone (serial): the other tests' operations would move the process's metrics.
test.serial('a fresh operation process\'s loading is counted apart from its operations\' CPU; a warm one loads nothing', async (t) => {
  const settings = await world();
  closePulumiOperations(); // the next operation gets a fresh process
  const loaded = async () => (await workerMetrics().pulumiLoadCpu.get()).values[0]?.value ?? 0;
  const upCpu = async () => (await workerMetrics().pulumiCpu.get()).values.find((v) => v.labels.operation === 'up' && v.metricName?.endsWith('_sum'))?.value ?? 0;
  const measured = async (stackName: string) => {
    const before = { load: await loaded(), up: await upCpu() };
    await runStackOperation(settings, request(stackName), 'up');
    return { load: await loaded() - before.load, up: await upCpu() - before.up };
  };
  const fresh = await measured('dep_load_fresh');
  const warm = await measured('dep_load_warm');
  // Node's start and Pulumi's SDK cost a fresh process far more than the CLI's start, which the up pays either way.
  t.true(fresh.load > 0.3, `loading ${fresh.load} CPU-seconds`);
  t.true(warm.load < 0.1, `loading ${warm.load} CPU-seconds`);
  t.true(fresh.up > 0.1 && warm.up > 0.1, 'each up counts its CLI run');
});

test('a lock left by a worker that died mid-update is cleared and the update runs', async (t) => {
  const settings = await world();
  await runStackOperation(settings, request('dep_locked'), 'up');
  const lockDir = join(settings.dir, 'state', '.pulumi', 'locks', 'organization', 'kiln-deployment', 'dep_locked');
  await mkdir(lockDir, { recursive: true });
  await writeFile(join(lockDir, '0b5e7a57-dead-4bad-8bad-000000000001.json'), JSON.stringify({ pid: 999999, username: 'root', hostname: 'gone', timestamp: new Date().toISOString() }));

  const outputs = await runStackOperation(settings, request('dep_locked', { replicas: 3 }), 'up');
  t.is(outputs.replicas?.value, 3);
  t.deepEqual(await readdir(lockDir), []);
});

test('an aborted update stops, and the next one succeeds', async (t) => {
  const settings = await world();
  const abort = new AbortController();
  const running = runStackOperation(settings, request('dep_abort', { delayMs: 20_000 }), 'up', {
    signal: abort.signal,
    onProgress: (line) => { if (line.includes('Updating')) abort.abort(); },
  });
  await t.throwsAsync(running);
  const outputs = await runStackOperation(settings, request('dep_abort'), 'up');
  t.is(outputs.serviceUrl?.value, 'http://llama.test');
});

test('a rejection left unhandled during an operation does not hide the failure the engine reports', async (t) => {
  const settings = await world();
  const failed = await t.throwsAsync(runStackOperation(settings, request('dep_stray', {
    strayRejection: 'Resource monitor is terminating', failWith: 'the API server refused the Deployment',
  }), 'up'));
  t.regex(failed.message, /the API server refused the Deployment/);
});

// Serial: the file's other operations would borrow the warm process between two of these.
test.serial('an operation process that ended cleanly runs the next operation; one that failed or was aborted is replaced', async (t) => {
  const settings = await world();
  const pidOf = async (stack: string) => (await runStackOperation(settings, request(stack), 'up')).operationPid?.value as number;
  const first = await pidOf('dep_warm_a');
  t.is(await pidOf('dep_warm_b'), first, 'the warm process ran the second operation');
  // The next operation is lent the same warm process, and fails.
  await t.throwsAsync(runStackOperation(settings, request('dep_warm_c', { failWith: 'refused' }), 'up'));
  const afterFailure = await pidOf('dep_warm_d');
  t.not(afterFailure, first, 'the process that failed was not used again');
  const abort = new AbortController();
  await t.throwsAsync(runStackOperation(settings, request('dep_warm_e', { delayMs: 20_000 }), 'up', {
    signal: abort.signal, onProgress: (line) => { if (line.includes('Updating')) abort.abort(); },
  }));
  t.not(await pidOf('dep_warm_f'), afterFailure, 'the process whose operation was aborted was not used again');
});

// Serial: the file's other operations would take the slots this fills.
test.serial('an operation cancelled while it waits for a free slot never runs', async (t) => {
  const settings = await world();
  // Two slow ups hold the pool's two slots (KILN_PULUMI_CONCURRENCY's default on 2 cores).
  const busy = [runStackOperation(settings, request('dep_slot_a', { delayMs: 6_000 }), 'up'), runStackOperation(settings, request('dep_slot_b', { delayMs: 6_000 }), 'up')];
  const cancel = new AbortController();
  const waiting = runStackOperation(settings, request('dep_slot_c'), 'up', { signal: cancel.signal });
  cancel.abort();
  const refused = await t.throwsAsync(waiting);
  t.regex(refused.message, /cancelled while it waited for its turn/);
  await Promise.all(busy);
  t.false((await stacksOf(settings)).includes('dep_slot_c.json'), 'its stack was never made');
});

test('a failed operation is summarised by the engine\'s own error lines, once each', (t) => {
  const output = [
    'code: -2', ' stderr: Command failed with exit code 1: pulumi up --yes', 'Updating (dep_x):',
    "    pulumi:providers:kubernetes cluster  error: no resource plugin 'pulumi-resource-kubernetes' found",
    'Diagnostics:', "    error: no resource plugin 'pulumi-resource-kubernetes' found", '    error: update failed',
  ].join('\n');
  t.is(pulumiErrorSummary(output), "no resource plugin 'pulumi-resource-kubernetes' found");
  t.is(pulumiErrorSummary('something odd happened'), 'something odd happened');
});
