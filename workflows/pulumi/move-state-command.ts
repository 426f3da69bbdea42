// npm run pulumi:migrate-state [-- --from <backend URL>] [--to <backend URL>]: moves a file backend's stacks into
// the worker's state backend (move-state.ts). --from defaults to the file backend Kiln used before its state moved
// into PostgreSQL (DATA_DIR/pulumi-state), --to to the backend the worker's configuration names (PULUMI_BACKEND_URL,
// or the table pulumi_state of DATABASE_URL). Run it with the workers stopped; it may be run again.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { exitOnConfigError, loadConfig } from '../../control-plane/config.ts';
import { moveState } from './move-state.ts';
import { stateFilesOf } from './diy-backend.ts';
import { passwordApart } from './state-table.ts';

const { values } = parseArgs({ options: { from: { type: 'string' }, to: { type: 'string' } } });
const config = await loadConfig('worker').catch(exitOnConfigError);
const from = values.from ?? `file://${join(config.dataDir, 'pulumi-state')}`;
const to = values.to ?? config.pulumiBackendUrl;
const [source, destination] = [stateFilesOf(from), stateFilesOf(to)];
if (!source || !destination) {
  console.error('pulumi:migrate-state moves between file:// and postgres:// backends; for the others use `pulumi stack export` and `pulumi stack import`');
  process.exit(2);
}
const move = await moveState(source, destination).catch((error: Error) => {
  console.error(`pulumi:migrate-state: ${error.message}`);
  process.exit(1);
});
console.log(`from ${from} to ${passwordApart(to).url}:`);
console.log(`  ${move.stacks.length} stacks moved${move.stacks.length ? `: ${move.stacks.join(', ')}` : ''}`);
console.log(`  ${move.moved.length} files copied (stacks, their history and backups), ${move.unchanged.length} already there`);
for (const path of move.differing) console.log(`  left as it is (the destination's differs, so it changed there since): ${path}`);
