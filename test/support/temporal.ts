// The Temporal dev server shared by a test run (started by infra/with-test-servers.ts), the SDK's logging in
// tests, and where tests keep workflow bundles between runs.
import { join } from 'node:path';
import type { LogLevel } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';

export function testTemporalAddress(): string {
  const address = process.env.KILN_TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('KILN_TEST_TEMPORAL_ADDRESS is not set: run the tests with `npm test`');
  return address;
}

/**
 * The SDK logs only what fails a test (by default it prints every worker's state changes). Call once per test
 * file, at its top: the runtime is installed before its first use.
 */
export function installTestRuntime(level: LogLevel = 'ERROR'): void {
  Runtime.install({ logger: new DefaultLogger(level) });
}

/** Workflow bundles shared by the test files of a run and kept for the next (workflows/workflow-bundle.ts). */
export function testBundleDir(): string {
  const dir = process.env.KILN_TEST_DATA_DIR;
  if (!dir) throw new Error('KILN_TEST_DATA_DIR is not set: run the tests with `npm test`');
  return join(dir, 'workflow-bundles');
}
