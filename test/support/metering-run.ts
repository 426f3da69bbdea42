// One metering run in a process of its own, so a test can kill it mid-run as a worker dies:
// node test/support/metering-run.ts <databaseUrl> <nowMs> <intervalMs>
import { openDatabase } from '../../control-plane/database/orm.ts';
import { createMeteringActivities } from '../../workflows/metering/activities.ts';
import { meteringStore } from '../../workflows/metering/store.ts';

const [databaseUrl, nowMs, intervalMs] = process.argv.slice(2);
const orm = await openDatabase(databaseUrl!, { migrate: false });
const activities = createMeteringActivities({
  store: meteringStore(orm), intervalMs: Number(intervalMs), settleMs: 0, graceMs: 86_400_000, now: () => new Date(Number(nowMs)),
  progress: () => process.stdout.write('.'),
});
console.log(JSON.stringify(await activities.closeDueIntervals()));
await orm.close();
