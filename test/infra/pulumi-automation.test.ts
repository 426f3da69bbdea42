import test from 'ava';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { openStack } from '../../workflows/pulumi/automation.ts';
import { pulumiSettingsIn } from '../support/pulumi.ts';

test('the Pulumi CLI runs an inline program up, reads its outputs and destroys it on a file backend', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-pulumi-'));
  const settings = pulumiSettingsIn(dir, 'test-passphrase');
  const stack = await openStack(settings, {
    project: 'kiln-infra-test',
    stackName: 'probe',
    config: { 'kiln-infra-test:greeting': { value: 'hello' }, 'kiln-infra-test:token': { value: 's3cr3t', secret: true } },
    program: async () => {
      const config = new pulumi.Config();
      const component = new pulumi.ComponentResource('kiln:test:Probe', 'probe');
      return { message: pulumi.interpolate`${config.require('greeting')} from ${component.urn}`, token: config.requireSecret('token') };
    },
  });

  const up = await stack.up();
  t.is(up.summary.result, 'succeeded');
  t.regex(up.outputs.message!.value as string, /^hello from urn:pulumi:probe::kiln-infra-test::kiln:test:Probe::probe$/);
  t.true(up.outputs.token!.secret);
  t.is((await stack.outputs()).token!.value, 's3cr3t');
  t.true((await readdir(join(dir, 'state', '.pulumi', 'stacks', 'kiln-infra-test'))).some((f) => f.startsWith('probe')));

  const destroy = await stack.destroy();
  t.is(destroy.summary.result, 'succeeded');
  t.deepEqual(await stack.outputs(), {});
});
