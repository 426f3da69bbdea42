// Gets one tool into the cache: reuse a binary on PATH at the pinned version, build it from Go modules,
// or download the official release. Each step writes into a temporary folder that is renamed into place
// only when complete, so an interrupted run never leaves a half-built tool behind.
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile, copyFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isLocal, parseReplaces } from './gomod.ts';
import { kilnCacheDir, toolDir } from './paths.ts';
import { TOOLS, type ToolName, type ToolSpec } from './versions.ts';

const run = promisify(execFile);
const MAX_BUFFER = 64 * 1024 * 1024;

export class ToolError extends Error {
  readonly tool: string;
  constructor(tool: string, message: string) {
    super(`${tool}: ${message}`);
    this.tool = tool;
  }
}

/** Built completely, with every binary its spec names (a spec that gained one, such as promtool, is built again). */
export const isInstalled = (name: ToolName) => existsSync(join(toolDir(name), '.complete'))
  && Object.keys(TOOLS[name].binaries).every((binary) => existsSync(join(toolDir(name), 'bin', binary)));

/** How the tool got into the cache, for the progress line. */
export type Source = 'cache' | 'path' | 'go' | 'download';

export async function ensureTool(name: ToolName): Promise<Source> {
  if (isInstalled(name)) return 'cache';
  const spec: ToolSpec = TOOLS[name];
  await mkdir(join(kilnCacheDir, 'tools'), { recursive: true });
  const staging = await mkdtemp(join(kilnCacheDir, 'tools', `.${name}-`));
  try {
    await mkdir(join(staging, 'bin'));
    const source = (await linkFromPath(spec, staging))
      ? 'path'
      : (await which('go'))
        ? (await goBuild(name, spec, staging), 'go')
        : (await download(name, spec, staging), 'download');
    await writeFile(join(staging, '.complete'), `${spec.version} ${source} ${new Date().toISOString()}\n`);
    await rm(toolDir(name), { recursive: true, force: true });
    await rename(staging, toolDir(name));
    return source;
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error instanceof ToolError ? error : new ToolError(name, (error as Error).message);
  }
}

async function which(binary: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, binary))) return join(dir, binary);
  }
  return undefined;
}

/** Uses binaries already on PATH when every one of them is there and reports the pinned version. */
async function linkFromPath(spec: ToolSpec, staging: string): Promise<boolean> {
  const binaries = Object.entries(spec.binaries);
  if (binaries[0]![1] === null) return false;
  const found = await Promise.all(binaries.map(([binary]) => which(binary)));
  if (found.some((p) => !p)) return false;
  const { stdout, stderr } = await run(found[0]!, [...binaries[0]![1]!]).catch(() => ({ stdout: '', stderr: '' }));
  if (!`${stdout}${stderr}`.includes(spec.version.replace(/^v/, ''))) return false;
  await Promise.all(binaries.map(([binary], i) => symlink(found[i]!, join(staging, 'bin', binary))));
  return true;
}

async function goBuild(name: ToolName, spec: ToolSpec, staging: string): Promise<void> {
  const { go } = spec;
  const bin = join(staging, 'bin');
  // Static, path-independent binaries: the same flags for every tool, so they share Go's build cache.
  const env = { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' };
  const ldflags = ['-s', '-w', ...(go.ldflags ?? []).map((f) => `-X=${f}`)].join(' ');
  const buildFlags = ['-trimpath', `-ldflags=${ldflags}`];
  const goRun = (args: string[], cwd?: string) =>
    run('go', args, { env: cwd ? env : { ...env, GOBIN: bin }, cwd, maxBuffer: MAX_BUFFER }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
      throw new ToolError(name, `go ${args[0]} failed:\n${tail(`${e.stderr ?? ''}${e.stdout ?? ''}` || e.message)}`);
    });

  const version = go.moduleVersion ?? spec.version;
  if (go.mode === 'install') {
    for (const pkg of go.packages) await goRun(['install', ...buildFlags, `${pkg}@${version}`]);
    return;
  }

  // A wrapper module: require the tool's module and repeat the replace lines `go install` would refuse.
  const wrapper = join(staging, 'module');
  await mkdir(wrapper);
  await writeFile(join(wrapper, 'go.mod'), 'module kiln.local/tools\n');
  const { stdout } = await goRun(['mod', 'download', '-json', `${go.module}@${version}`], wrapper);
  const info = JSON.parse(stdout) as { GoMod: string; Dir: string; Error?: string };
  if (info.Error) throw new ToolError(name, info.Error);
  const upstream = await readFile(info.GoMod, 'utf8');
  const goLine = /^go\s+(\S+)/m.exec(upstream)?.[1] ?? '1.24';
  const lines = parseReplaces(upstream).flatMap((r) => {
    if (!isLocal(r)) return [`replace ${r.from} => ${r.to} ${r.toVersion ?? ''}`.trim()];
    const version = go.localReplace?.(r.from);
    return version ? [`replace ${r.from} => ${r.from} ${version}`] : [];
  });
  await writeFile(join(wrapper, 'go.mod'), ['module kiln.local/tools', '', `go ${goLine}`, '', ...lines, ''].join('\n'));
  if (go.mainPackage) {
    for (const [file, content] of Object.entries(await go.mainPackage(info.Dir))) await writeFile(join(wrapper, file), content);
    await goRun(['get', `${go.module}@${version}`], wrapper);
    await goRun(['build', ...buildFlags, '-o', join(bin, Object.keys(spec.binaries)[0]!), '.'], wrapper);
  } else {
    await goRun(['get', ...go.packages.map((p) => `${p}@${version}`)], wrapper);
    await goRun(['build', ...buildFlags, '-o', `${bin}/`, ...go.packages], wrapper);
  }
  await rm(wrapper, { recursive: true, force: true });
  for (const [built, wanted] of Object.entries(go.rename ?? {})) await rename(join(bin, built), join(bin, wanted));
}

async function download(name: ToolName, spec: ToolSpec, staging: string): Promise<void> {
  const { url, paths } = spec.download(spec.version);
  const response = await fetch(url).catch((e: Error) => {
    throw new ToolError(name, `no Go toolchain on PATH and the download of ${url} failed: ${e.message}`);
  });
  if (!response.ok) throw new ToolError(name, `no Go toolchain on PATH and ${url} answered ${response.status}`);
  const archive = join(staging, 'download');
  await writeFile(archive, Buffer.from(await response.arrayBuffer()));
  const isTar = url.endsWith('.tar.gz') || url.endsWith('.tgz');
  if (isTar) await run('tar', ['-xzf', archive, '-C', staging]);
  for (const [binary, inner] of Object.entries(paths)) {
    const target = join(staging, 'bin', binary);
    await (isTar ? rename(join(staging, inner), target) : copyFile(archive, target));
    await chmod(target, 0o755);
  }
}

const tail = (text: string, lines = 25) => text.trim().split('\n').slice(-lines).join('\n');
