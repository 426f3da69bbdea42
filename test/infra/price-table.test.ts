// The shipped price table (catalog/provider-prices.ts) is what infra/price-table/generate.ts picks from the
// source catalog's CSVs: re-derived here from excerpts of those CSVs (test/fixtures/price-table/, the header
// and the selected rows as the source commits hold them), every row with its source path and commit.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gpuMemoryGb, pickRows, renderModule, REPOSITORY, SELECTIONS, splitCsvLine } from '../../infra/price-table/generate.ts';
import { PROVIDER_PRICES } from '../../catalog/provider-prices.ts';

const excerpt = (path: string) => readFileSync(join(import.meta.dirname, '../fixtures/price-table', `${path.split('/')[2]}.csv`), 'utf8');

test('each shipped row is the selected row of its source CSV, with its source', (t) => {
  for (const path of new Set(SELECTIONS.map((s) => s.path))) {
    const shipped = PROVIDER_PRICES.filter((row) => row.source.path === path);
    const commit = shipped[0]!.source.commit;
    const derived = pickRows(excerpt(path), SELECTIONS.filter((s) => s.path === path), { repository: REPOSITORY, path, commit, date: shipped[0]!.source.date, retrievedOn: shipped[0]!.source.retrievedOn });
    t.deepEqual(shipped, derived, path);
  }
  t.is(PROVIDER_PRICES.length, SELECTIONS.length);
  t.true(PROVIDER_PRICES.every((row) => /^[0-9a-f]{40}$/.test(row.source.commit) && row.source.repository === REPOSITORY && /^\d{4}-\d{2}-\d{2}$/.test(row.source.retrievedOn)));
});

test('CSV fields: quoted commas stay in their field; GPU memory in MiB, or GiB where a catalog writes GiB there', (t) => {
  t.deepEqual(splitCsvLine('a,"b, ""c""",d'), ['a', 'b, "c"', 'd']);
  t.is(gpuMemoryGb("{'MemoryInfo': {'SizeInMiB': 22888}}"), 22.35);
  t.is(gpuMemoryGb("{'MemoryInfo': {'SizeInMiB': 80}}"), 80);
  t.is(gpuMemoryGb('{}'), undefined);
  t.throws(() => pickRows('InstanceType,Region\nx,y\n', [{ provider: 'p', path: 'p.csv', instanceType: 'z', region: 'y' }], { repository: REPOSITORY, path: 'p.csv', commit: 'c', date: null, retrievedOn: '2026-11-24' }),
    { message: 'p.csv has no row for z in y' });
});

test('the shipped module is exactly what the generator renders from its rows (nobody edited it by hand)', (t) => {
  t.is(readFileSync(join(import.meta.dirname, '../../catalog/provider-prices.ts'), 'utf8'), renderModule(PROVIDER_PRICES.map((row) => ({ ...row, source: { ...row.source } }))));
});
