// The Temporal dev server shared by a test run (started by infra/with-test-servers.ts) and where tests keep
// workflow bundles between runs. The SDK's logging in tests is in temporal-runtime.ts: it loads the worker
// SDK, which most test files never need.
import { join } from 'node:path';

export function testTemporalAddress(): string {
  const address = process.env.KILN_TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('KILN_TEST_TEMPORAL_ADDRESS is not set: run the tests with `npm test`');
  return address;
}

/** Workflow bundles shared by the test files of a run and kept for the next (workflows/workflow-bundle.ts). */
export function testBundleDir(): string {
  const dir = process.env.KILN_TEST_DATA_DIR;
  if (!dir) throw new Error('KILN_TEST_DATA_DIR is not set: run the tests with `npm test`');
  return join(dir, 'workflow-bundles');
}
