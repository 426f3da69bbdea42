// Metering time (part of `npm run bench:billing`): one interval closed for BENCH_METERING_DEPLOYMENTS running
// deployments across BENCH_METERING_ORGANIZATIONS organizations, by the activity the metering schedule runs
// (workflows/metering/activities.ts: per organization, the usage query over the replica history, the interval
// and its charges, the debit through the credit ledger, in one transaction), against a baseline measured in the
// same run: the same interval for one organization of the same shape. Each figure is the median of
// BENCH_METERING_RUNS runs, each over an interval of its own.
// Run: node bench/billing-metering.ts
import { createMeteringActivities } from '../workflows/metering/activities.ts';
import { meteringStore } from '../workflows/metering/store.ts';
import { startBenchApi } from './support/bench-api.ts';

const ORGANIZATIONS = Number(process.env.BENCH_METERING_ORGANIZATIONS ?? 1_000);
const DEPLOYMENTS = Number(process.env.BENCH_METERING_DEPLOYMENTS ?? 10_000);
const RUNS = Number(process.env.BENCH_METERING_RUNS ?? 3);
const INTERVAL_MS = 3_600_000;

const api = await startBenchApi('metering');
const T0 = Date.UTC(2026, 9, 1);
const perOrganization = Math.ceil(DEPLOYMENTS / ORGANIZATIONS);

/** Organizations `prefix`0..n-1, each with `perOrganization` deployments running 1 to 3 replicas of a GPU type since T0. */
async function seed(prefix: string, organizations: number): Promise<void> {
  await api.pool.query(
    `INSERT INTO organization (id, created_at, name, slug, default_region, plan, credits_cents, last_top_up_cents)
     SELECT $1 || lpad(i::text, 10, '0'), now(), 'bench ' || i, $1 || i, 'us-east-1', 'growth', 100000000, 100000000 FROM generate_series(0, $2 - 1) i`,
    [prefix, organizations]);
  await api.pool.query(
    `INSERT INTO replica_record (id, created_at, organization_id, deployment_id, status, replicas, gpu, gpus_per_replica, observed_at)
     SELECT 'rep_' || $1 || i || '_' || d, now(), $1 || lpad(i::text, 10, '0'), 'dep_' || $1 || i || '_' || d, 'running', 1 + d % 3,
            (ARRAY['nvidia-l4', 'nvidia-a10g', 'nvidia-h100-80gb'])[1 + d % 3], 1 + d % 2, $3
     FROM generate_series(0, $2 - 1) i, generate_series(0, $4 - 1) d`,
    [prefix, organizations, new Date(T0), perOrganization]);
}

/** Milliseconds to close run `run`'s interval for every organization seeded so far that is due. */
async function meter(run: number): Promise<{ ms: number; intervals: number; debitedCents: number }> {
  const activities = createMeteringActivities({
    store: meteringStore(api.orm), intervalMs: INTERVAL_MS, settleMs: 0, graceMs: 86_400_000, now: () => new Date(T0 + (run + 1) * INTERVAL_MS),
  });
  const started = performance.now();
  const result = await activities.closeDueIntervals();
  return { ms: performance.now() - started, intervals: result.intervals, debitedCents: result.debitedCents };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

try {
  await seed('org_benchone', 1);
  const baseline: number[] = [];
  for (let run = 0; run < RUNS; run++) baseline.push((await meter(run)).ms);
  // The many: seeded now, metered from T0 (their backlog of RUNS intervals is closed first, untimed).
  await seed('org_benchall', ORGANIZATIONS);
  await meter(RUNS - 1);
  const many: Array<{ ms: number; intervals: number; debitedCents: number }> = [];
  for (let run = RUNS; run < 2 * RUNS; run++) many.push(await meter(run));
  const manyMs = median(many.map((m) => m.ms));
  const baselineMs = median(baseline);
  console.log(`metering one hourly interval (median of ${RUNS} runs, each its own interval):`);
  console.log(`  baseline: 1 organization, ${perOrganization} deployments: ${baselineMs.toFixed(1)} ms`);
  console.log(`  ${ORGANIZATIONS + 1} organizations, ${(ORGANIZATIONS + 1) * perOrganization} running deployments: ${manyMs.toFixed(0)} ms`
    + ` (${(manyMs / (ORGANIZATIONS + 1)).toFixed(2)} ms an organization, ${(manyMs / baselineMs).toFixed(0)}x the baseline); ${many.at(-1)!.intervals} intervals closed, ${many.at(-1)!.debitedCents} cents drawn`);
} finally {
  await api.close();
}
