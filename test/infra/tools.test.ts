import test from 'ava';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { binaryPath } from '../../infra/tools/paths.ts';
import { TOOLS, type ToolName } from '../../infra/tools/versions.ts';

const run = promisify(execFile);

test('the Pulumi CLI is pinned to the version of the @pulumi/pulumi package', async (t) => {
  const pkg = JSON.parse(await readFile(new URL('../../node_modules/@pulumi/pulumi/package.json', import.meta.url), 'utf8')) as { version: string };
  t.is(TOOLS.pulumi.version, `v${pkg.version}`);
});

for (const name of Object.keys(TOOLS) as ToolName[]) {
  test(`every ${name} binary is in the cache and reports ${TOOLS[name].version}`, async (t) => {
    const spec = TOOLS[name];
    for (const [binary, args] of Object.entries(spec.binaries)) {
      const { stdout, stderr } = await run(binaryPath(name, binary), [...args]);
      t.true(`${stdout}${stderr}`.includes(spec.version.replace(/^v/, '')), `${binary} ${args.join(' ')} printed ${stdout}${stderr}`);
    }
  });
}
