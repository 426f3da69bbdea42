import test from 'ava';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { binaryPath } from '../../infra/tools/paths.ts';
import { SEARCH_ATTRIBUTES } from '../../workflows/contract/search-attributes.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';
import * as activities from './fixtures/greeting.activities.ts';

installTestRuntime('WARN');

test('a workflow runs to completion on the local Temporal dev server, with Kiln search attributes', async (t) => {
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: binaryPath('temporal') }, searchAttributes: SEARCH_ATTRIBUTES },
  });
  t.teardown(() => env.teardown());
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'infra-test',
    workflowsPath: new URL('./fixtures/greeting.workflow.ts', import.meta.url).pathname,
    activities,
  });
  const result = await worker.runUntil(
    env.client.workflow.execute('greetingWorkflow', { taskQueue: 'infra-test', workflowId: 'greeting-1', args: ['kiln'] }),
  );
  t.is(result, 'hello, kiln!');

  const { customAttributes } = await env.connection.operatorService.listSearchAttributes({ namespace: env.namespace ?? 'default' });
  for (const key of SEARCH_ATTRIBUTES) t.true(key.name in (customAttributes ?? {}), `${key.name} is registered`);
});
