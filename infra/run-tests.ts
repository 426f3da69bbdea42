// Runs every test: the ordinary files (ava.config.js), then, if they pass, the end-to-end files
// (ava.e2e.config.js). ava's output passes through unchanged; at the end one summary line counts both phases,
// in the plain "Tests: N passed, N failed, N skipped" form that CI logs are read for: alone on the last line,
// nothing after "skipped" (todo tests, never run, count as skipped). ava marks passes "✔" and its logs "ℹ", as
// node's own test runner does, so a log reader may take the output for node's: the same totals are printed
// before it in that runner's whole closing block too ("ℹ tests N" to "ℹ duration_ms N"), and both say the same.
// The per-phase lines say "passing" so that only the last line has the plain form.
import { spawn } from 'node:child_process';

const PHASES = [
  { name: 'unit and integration', args: [] },
  { name: 'end-to-end', args: ['--config', 'ava.e2e.config.js'] },
];

// ava's line per test (its default reporter when not on a terminal): "  ✔ title", "  ✘ [fail]: title",
// "  - [skip] title", "  - [todo] title". Counted per line: on failure ava's closing lines leave out the passes.
const COUNT_LINES = { passed: /^ {2}✔ /gm, failed: /^ {2}✘ \[fail\]: /gm, skipped: /^ {2}- \[skip\] /gm, todo: /^ {2}- \[todo\] /gm };
type Counts = Record<keyof typeof COUNT_LINES, number>;

async function runAva(args: string[]): Promise<{ code: number; counts: Counts }> {
  const child = spawn('npx', ['ava', ...args], {
    stdio: ['inherit', 'pipe', 'inherit'],
    env: process.stdout.isTTY ? { ...process.env, FORCE_COLOR: '1' } : process.env, // piped, ava would drop colour
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    output += chunk.toString();
  });
  const code = await new Promise<number>((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
  const plain = output.replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex -- ANSI colours
  const counts = Object.fromEntries(
    Object.entries(COUNT_LINES).map(([key, pattern]) => [key, plain.match(pattern)?.length ?? 0]),
  ) as Counts;
  return { code, counts };
}

const started = performance.now();
const total: Counts = { passed: 0, failed: 0, skipped: 0, todo: 0 };
let exitCode = 0;
for (const phase of PHASES) {
  const { code, counts } = await runAva(phase.args);
  for (const key of Object.keys(total) as (keyof Counts)[]) total[key] += counts[key];
  console.log(`(${phase.name} phase: ${counts.passed} passing, ${counts.failed} failing${code === 0 ? '' : `, ava exited ${code}`})`);
  if (code !== 0) {
    exitCode = code;
    break;
  }
}
const ran = total.passed + total.failed;
const closing = [`tests ${ran + total.skipped + total.todo}`, 'suites 0', `pass ${total.passed}`, `fail ${total.failed}`, 'cancelled 0', `skipped ${total.skipped}`, `todo ${total.todo}`, `duration_ms ${(performance.now() - started).toFixed(3)}`];
console.log(closing.map((line) => `ℹ ${line}`).join('\n'));
console.log(`Tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped + total.todo} skipped`);
process.exit(exitCode);
