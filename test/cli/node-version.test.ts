// The `kiln` entry point runs on any Node far enough to say it needs Node 24, rather than crashing on TypeScript.
import test from 'ava';
import { spawn } from 'node:child_process';
import { nodeVersionProblem } from '../../client/cli/node-version.js';

test('a Node older than 24 is told, in one line, what to install; 24 and later run the CLI', (t) => {
  t.is(nodeVersionProblem('20.19.0'), 'needs Node.js 24 or later (this is 20.19.0): install it (e.g. `nvm install 24`), or run it as `npx kiln` in a Kiln checkout, which brings its own');
  t.is(nodeVersionProblem('22.12.0')?.startsWith('needs Node.js 24 or later (this is 22.12.0)'), true);
  t.is(nodeVersionProblem('24.0.0'), undefined);
  t.is(nodeVersionProblem('25.1.0'), undefined);
});

test('the installed entry point (package.json bin) runs the CLI on this Node', async (t) => {
  const child = spawn(process.execPath, [new URL('../../client/cli/kiln.js', import.meta.url).pathname, '--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => { out += String(chunk); });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.is(code, 0);
  t.regex(out, /^\d+\.\d+\.\d+/);
});
