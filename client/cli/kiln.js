#!/usr/bin/env node
// `kiln` as npm installs it (package.json bin). Plain JavaScript, so that any Node can run it far enough to say
// what it needs. The CLI itself is TypeScript: run as it is in a Kiln checkout (Node runs TypeScript from
// version 24 on), and from dist/ (built by `npm pack`) where the package was installed, since Node does not
// run TypeScript from node_modules.
import { nodeVersionProblem } from './node-version.js';

const problem = nodeVersionProblem(process.versions.node);
if (problem) {
  console.error(`kiln: ${problem}`);
  process.exit(1);
}
const installed = import.meta.url.includes('/node_modules/');
const { run } = await import(installed ? '../dist/cli/program.js' : './program.ts');
process.exitCode = await run(process.argv);
