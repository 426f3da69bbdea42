import test from 'ava';
import grpc from '@grpc/grpc-js';
import emptyPb from 'google-protobuf/google/protobuf/empty_pb.js';
import providerGrpc from '@pulumi/pulumi/proto/provider_grpc_pb.js';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { onPath } from '../../infra/tools/debian.ts';
import { binaryPath, pythonToolBinary, pythonToolDir } from '../../infra/tools/paths.ts';
import { builtPlugin, isPluginCurrent, pluginBinary } from '../../infra/tools/pulumi-plugins.ts';
import { DEBIAN_PACKAGES, KUBERNETES_PROVIDER_VERSION, PULUMI_PLUGINS, PYTHON_TOOLS, TOOLS, type PythonToolName, type ToolName } from '../../infra/tools/versions.ts';

const run = promisify(execFile);

test('the Pulumi CLI is pinned to the version of the @pulumi/pulumi package', async (t) => {
  const pkg = JSON.parse(await readFile(new URL('../../node_modules/@pulumi/pulumi/package.json', import.meta.url), 'utf8')) as { version: string };
  t.is(TOOLS.pulumi.version, `v${pkg.version}`);
});

for (const name of Object.keys(TOOLS) as ToolName[]) {
  test(`every ${name} binary is in the cache and reports ${TOOLS[name].version}`, async (t) => {
    const spec = TOOLS[name];
    for (const [binary, args] of Object.entries(spec.binaries)) {
      // A plugin prints no version: the GetPluginInfo test below asks the installed copy.
      if (args === null) {
        t.true(existsSync(binaryPath(name, binary)), binary);
        continue;
      }
      const { stdout, stderr } = await run(binaryPath(name, binary), [...args]);
      t.true(`${stdout}${stderr}`.includes(spec.version.replace(/^v/, '')), `${binary} ${args.join(' ')} printed ${stdout}${stderr}`);
    }
  });
}

for (const name of Object.keys(PYTHON_TOOLS) as PythonToolName[]) {
  const spec = PYTHON_TOOLS[name];
  test(`${name} is installed from PyPI at exactly ${spec.version}, its dependencies at the versions of ${spec.constraints}`, async (t) => {
    t.true(existsSync(join(pythonToolDir(name), '.complete')), 'npm run tools installs it');
    for (const [binary, args] of Object.entries(spec.binaries)) {
      const { stdout, stderr } = await run(pythonToolBinary(name, binary), [...args]);
      t.regex(`${stdout}${stderr}`, new RegExp(`\\b${spec.version.replaceAll('.', '\\.')}\\b`), `${binary} ${args.join(' ')} printed ${stdout}${stderr}`);
    }
    const { stdout: freeze } = await run(pythonToolBinary(name, 'python'), ['-m', 'pip', 'freeze', '--disable-pip-version-check']);
    const installed = new Map(freeze.trim().split('\n').map((line) => line.split('==') as [string, string]).map(([p, v]) => [p.toLowerCase().replaceAll('_', '-'), v]));
    t.is(installed.get(spec.package), spec.version);
    const constraints = (await readFile(new URL(`../../infra/tools/${spec.constraints}`, import.meta.url), 'utf8')).trim().split('\n');
    for (const [p, v] of constraints.map((line) => line.split('==') as [string, string])) {
      const key = p.toLowerCase().replaceAll('_', '-');
      if (installed.has(key)) t.is(installed.get(key), v, p);
    }
  });
}

for (const [name, spec] of Object.entries(DEBIAN_PACKAGES)) {
  test(`the Debian package ${name} is installed: ${spec.commands.join(', ')} on PATH`, (t) => {
    for (const command of spec.commands) t.true(onPath(command), command);
  });
}

test('@pulumi/kubernetes is pinned exactly to the Kubernetes provider version the plugins install', async (t) => {
  const project = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
  const sdk = JSON.parse(await readFile(new URL('../../node_modules/@pulumi/kubernetes/package.json', import.meta.url), 'utf8')) as { version: string };
  t.is(project.dependencies['@pulumi/kubernetes'], KUBERNETES_PROVIDER_VERSION);
  t.is(sdk.version, KUBERNETES_PROVIDER_VERSION);
  t.deepEqual(PULUMI_PLUGINS.filter((p) => p.name === 'kubernetes').map((p) => p.version), [KUBERNETES_PROVIDER_VERSION]);
});

for (const plugin of PULUMI_PLUGINS) {
  test(`pulumi plugin ${plugin.kind} ${plugin.name} ${plugin.version} is installed from the ${plugin.tool} tool's build, byte for byte`, async (t) => {
    t.true(isPluginCurrent(plugin), `${pluginBinary(plugin)}: npm run tools installs it`);
    const [installed, built] = await Promise.all([readFile(pluginBinary(plugin)), readFile(builtPlugin(plugin))]);
    t.true(installed.equals(built));
  });

  test(`the installed ${plugin.name} plugin prints only its port and answers GetPluginInfo with ${plugin.version}`, async (t) => {
    const child = spawn(pluginBinary(plugin), ['127.0.0.1:1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.teardown(() => { child.kill(); });
    const stdout = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => { text += chunk.toString(); if (text.includes('\n')) resolve(text); });
      child.on('exit', (code) => reject(new Error(`the plugin exited (${code}) before printing a port`)));
    });
    t.regex(stdout, /^\d+\n$/);
    const client = new providerGrpc.ResourceProviderClient(`127.0.0.1:${stdout.trim()}`, grpc.credentials.createInsecure());
    t.teardown(() => client.close());
    const info = await new Promise<string>((resolve, reject) => {
      client.getPluginInfo(new emptyPb.Empty(), (error: Error | null, response: { getVersion(): string }) => (error ? reject(error) : resolve(response.getVersion())));
    });
    t.is(info, plugin.version);
  });
}
