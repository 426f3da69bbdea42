// The Temporal SDK's logging in tests.
import type { LogLevel } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';

/**
 * The SDK logs only what fails a test (by default it prints every worker's state changes). Call once per test
 * file, at its top: the runtime is installed before its first use.
 */
export function installTestRuntime(level: LogLevel = 'ERROR'): void {
  Runtime.install({ logger: new DefaultLogger(level) });
}
