#!/usr/bin/env node
// `kiln`, Kiln's command line (package.json bin: `npx kiln` in a checkout). Node runs it as TypeScript,
// as it runs the rest of Kiln (type stripping, Node 24).
import { run } from './program.ts';

process.exitCode = await run(process.argv);
