#!/usr/bin/env node
// `kiln` as npm installs it (package.json bin). Plain JavaScript, so that any Node can run it far enough to say
// what it needs: the CLI itself is TypeScript, which Node runs directly from version 24 on.
import { nodeVersionProblem } from './node-version.js';

const problem = nodeVersionProblem(process.versions.node);
if (problem) {
  console.error(`kiln: ${problem}`);
  process.exit(1);
}
const { run } = await import('./program.ts');
process.exitCode = await run(process.argv);
