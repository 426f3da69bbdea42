// docs/reference/ is generated from the code (infra/docs-reference.ts): a command, a setting or a webhook event
// changed without regenerating fails here, naming the command that brings the pages up to date.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { REFERENCE_DIR, REFERENCE_PAGES, REGENERATE_COMMAND } from '../../infra/docs-reference.ts';

for (const [file, generate] of Object.entries(REFERENCE_PAGES)) {
  test(`docs/reference/${file} is what the code generates`, async (t) => {
    const checkedIn = await readFile(join(REFERENCE_DIR, file), 'utf8').catch(() => undefined);
    t.true(checkedIn === generate(), `docs/reference/${file} is out of date with the code: run \`${REGENERATE_COMMAND}\` and commit docs/reference/`);
  });
}
