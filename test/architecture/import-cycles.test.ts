// No two modules of the shipping code import each other, even by type, directly or through others: a cycle
// means two pieces that cannot be understood (or moved) apart (ARCHITECTURE.md).
import { execFileSync } from 'node:child_process';
import test from 'ava';
import { importsOf, ROOT } from '../support/imports.ts';

const SHIPPING = ['control-plane', 'workflows', 'stacks', 'catalog', 'lib', 'client', 'web'];

function importGraph(): Map<string, string[]> {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...SHIPPING.flatMap((d) => [`${d}/*.ts`, `${d}/*.tsx`])], { cwd: ROOT, encoding: 'utf8' })
    .split('\n').filter(Boolean);
  return new Map(files.map((file) => [file, importsOf(file)]));
}

/** Each cycle once, as the files on it (a depth-first search that reports back edges). */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') found.push(path.slice(path.indexOf(next)));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

test('the shipping code has no import cycles', (t) => {
  const graph = importGraph();
  t.true(graph.size > 100, `read ${graph.size} files`);
  t.deepEqual(cycles(graph).map((cycle) => cycle.join(' -> ')), []);
});

test('the cycle finder finds a cycle through a third file', (t) => {
  t.deepEqual(cycles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]])), [['a.ts', 'b.ts', 'c.ts']]);
});
