// Kiln's image (the Dockerfile, which no test here can build: there is no container engine) copies some of the
// repository and installs the runtime dependencies alone (npm ci --omit=dev). What it copies must hold every
// file the processes stacks/kiln-on-kubernetes starts load, and what it installs every package they import.
import test from 'ava';
import { globSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KILN_PROCESSES } from '../../stacks/kiln-on-kubernetes/processes.ts';
import { loadedWith, ROOT } from '../support/imports.ts';

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const runtimeStage = dockerfile.split(/^FROM /m).at(-1)!;
// A build stage's copy is named by where it lands (`COPY --from=build /app/web/dist web/dist`), the others by what they copy.
const copies = [...runtimeStage.matchAll(/^COPY (--from=build )?(?:--\S+ )*(.+) (\S+)$/gm)].map((m) => ({ built: !!m[1], paths: m[1] ? [m[3]!] : m[2]!.split(' ') }));
/** What the runtime stage copies, from the repository or from the build stage (docs/ with the built sites). */
const copied = copies.flatMap((c) => c.paths);
/** The folders of sources it copies from the repository. */
const sourceFolders = copies.filter((c) => !c.built).flatMap((c) => c.paths).filter((path) => !path.includes('.'));
const isCopied = (file: string) => copied.some((path) => file === path || file.startsWith(`${path}/`));
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };

test('the image holds every file the three processes load, and runs each process\'s command', (t) => {
  for (const [name, process] of Object.entries(KILN_PROCESSES)) {
    const [node, entry] = process.command;
    t.is(node, 'node', name);
    const missing = [...loadedWith(entry!)].filter((file) => !isCopied(file));
    t.deepEqual(missing, [], `${name}: files not in the image`);
  }
  t.regex(runtimeStage, /^CMD \["node", "control-plane\/main\.ts"\]$/m);
  // The API serves both sites from their default places (control-plane/config.ts).
  t.true(isCopied('web/dist/index.html') && isCopied('docs/.vitepress/dist/index.html'));
});

test('every package the copied sources import is installed without the devDependencies', (t) => {
  const sources = sourceFolders.flatMap((folder) => globSync(`${folder}/**/*.ts`, { cwd: ROOT }));
  t.true(sources.length > 100, `${sources.length} sources`);
  const PACKAGE = /(?:^(?:import|export)(?!\s+type\b)(?:[^'"]*from)?\s*|\bimport\()['"]([^.'"/][^'"]*)['"]/gm;
  const packages = new Set(sources.flatMap((file) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(PACKAGE)].map((m) => m[1]!)
    .filter((specifier) => !specifier.startsWith('node:'))
    .map((specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/'))));
  t.true(packages.has('@pulumi/kubernetes') && packages.has('koa'));
  const devOnly = [...packages].filter((name) => lock.packages[`node_modules/${name}`]?.dev === true);
  const absent = [...packages].filter((name) => !lock.packages[`node_modules/${name}`]);
  t.deepEqual(devOnly, [], 'imported but installed only with the devDependencies');
  t.deepEqual(absent, [], 'imported but never installed');
});
