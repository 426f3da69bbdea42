// The relative imports of Kiln's sources, read from the text with one pattern: `import … from`, `export … from`
// and a bare `import './x.ts'`. A dynamic import() is not one: it loads on first use, not with the file.
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
const IMPORT = /^(?:import|export)(\s+type\b)?(?:[^'"]*from)?\s*['"](\.{1,2}\/[^'"]+)['"]/gm;

/**
 * The files `file` imports, as paths from the repository's root. 'loaded' leaves out `import type` and
 * `export type`, which Node strips before it runs the file.
 */
export function importsOf(file: string, which: 'all' | 'loaded' = 'all'): string[] {
  return [...readFileSync(join(ROOT, file), 'utf8').matchAll(IMPORT)]
    .filter((match) => which === 'all' || match[1] === undefined)
    .map((match) => relative(ROOT, normalize(join(ROOT, dirname(file), match[2]!))));
}

/** Every file of the repository that Node loads when it starts `entry` (itself included). */
export function loadedWith(entry: string): Set<string> {
  const loaded = new Set<string>();
  const load = (file: string) => {
    if (loaded.has(file)) return;
    loaded.add(file);
    for (const next of importsOf(file, 'loaded')) load(next);
  };
  load(entry);
  return loaded;
}
