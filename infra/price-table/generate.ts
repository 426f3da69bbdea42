// Regenerates catalog/provider-prices.ts, the GPU offers POST /v1/providers/compare-costs compares, from a
// checkout of the public cloud price catalog skypilot-org/skypilot-catalog (one CSV per cloud, a row per
// instance type and region with its on-demand price). Each row Kiln ships names its source: the repository,
// the CSV's path, the last commit that changed that file and that commit's date, so anyone can check a price.
//
//   git clone https://github.com/skypilot-org/skypilot-catalog /tmp/skypilot-catalog
//   node infra/price-table/generate.ts --git-dir /tmp/skypilot-catalog/.git [--rev HEAD] [--out catalog/provider-prices.ts]
//
// SELECTIONS says which rows: a few GPU instance types per provider, in one region each, chosen for the GPU
// types Kiln's own catalog knows (catalog/gpu-types.ts) and their close relatives.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

export const REPOSITORY = 'skypilot-org/skypilot-catalog';

export interface Selection {
  readonly provider: string;
  /** The CSV in the repository. */
  readonly path: string;
  readonly instanceType: string;
  readonly region: string;
  /** For catalogs listing one row per availability zone (RunPod): the zone whose row is taken. */
  readonly zone?: string;
  /** The Kiln GPU type (catalog/gpu-types.ts) this GPU is, when it is one. */
  readonly kilnGpu?: string;
}

export const SELECTIONS: readonly Selection[] = [
  { provider: 'aws', path: 'catalogs/v8/aws/vms.csv', instanceType: 'g6.2xlarge', region: 'us-east-1', kilnGpu: 'nvidia-l4' },
  { provider: 'aws', path: 'catalogs/v8/aws/vms.csv', instanceType: 'gr6.4xlarge', region: 'us-east-1', kilnGpu: 'nvidia-l4' },
  { provider: 'aws', path: 'catalogs/v8/aws/vms.csv', instanceType: 'g6.24xlarge', region: 'us-east-1', kilnGpu: 'nvidia-l4' },
  { provider: 'lambda', path: 'catalogs/v8/lambda/vms.csv', instanceType: 'gpu_1x_a10', region: 'us-east-1' },
  { provider: 'lambda', path: 'catalogs/v8/lambda/vms.csv', instanceType: 'gpu_1x_a100', region: 'us-east-1' },
  { provider: 'lambda', path: 'catalogs/v8/lambda/vms.csv', instanceType: 'gpu_2x_a100', region: 'us-east-1' },
  { provider: 'lambda', path: 'catalogs/v8/lambda/vms.csv', instanceType: 'gpu_1x_h100_sxm5', region: 'us-east-1', kilnGpu: 'nvidia-h100-80gb' },
  { provider: 'lambda', path: 'catalogs/v8/lambda/vms.csv', instanceType: 'gpu_2x_h100_sxm5', region: 'us-east-1', kilnGpu: 'nvidia-h100-80gb' },
  { provider: 'lambda', path: 'catalogs/v8/lambda/vms.csv', instanceType: 'gpu_8x_h100_sxm5', region: 'us-east-1', kilnGpu: 'nvidia-h100-80gb' },
  { provider: 'runpod', path: 'catalogs/v8/runpod/vms.csv', instanceType: '1x_A100-80GB_SECURE', region: 'US', zone: 'US-CA-1', kilnGpu: 'nvidia-a100-80gb' },
  { provider: 'runpod', path: 'catalogs/v8/runpod/vms.csv', instanceType: '2x_A100-80GB_SECURE', region: 'US', zone: 'US-CA-1', kilnGpu: 'nvidia-a100-80gb' },
];

/** One row of the generated table. */
export interface PriceRow {
  provider: string;
  instanceType: string;
  region: string;
  gpuName: string;
  gpuCount: number;
  gpuMemoryGb: number;
  hourlyUsd: number;
  kilnGpu: string | null;
  /** `date`: the commit's; `retrievedOn`: the day the row was taken from it (UTC), as of which the price holds. */
  source: { repository: string; path: string; commit: string; date: string | null; retrievedOn: string };
}

/** A CSV line split into fields: commas inside double quotes belong to the field ("" is a quote). */
export function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { fields.push(field); field = ''; } else field += c;
  }
  fields.push(field);
  return fields;
}

/**
 * GiB of one GPU from the catalog's GpuInfo column (a Python dict literal with MemoryInfo.SizeInMiB). Some
 * catalogs (RunPod's) write GiB in that field; a "MiB" figure under 1024 is read as GiB.
 */
export function gpuMemoryGb(gpuInfo: string): number | undefined {
  const match = /'SizeInMiB':\s*([\d.]+)/.exec(gpuInfo);
  if (!match) return undefined;
  const value = Number(match[1]);
  return Math.round((value < 1024 ? value : value / 1024) * 100) / 100;
}

/** The selected rows of one CSV's text. */
export function pickRows(csv: string, selections: readonly Selection[], source: PriceRow['source']): PriceRow[] {
  const [header, ...lines] = csv.split('\n').filter((line) => line.trim() !== '');
  const columns = splitCsvLine(header!);
  const at = (fields: string[], name: string) => fields[columns.indexOf(name)] ?? '';
  const rows: PriceRow[] = [];
  for (const selection of selections) {
    const found = lines.map(splitCsvLine).find((fields) => at(fields, 'InstanceType') === selection.instanceType && at(fields, 'Region') === selection.region
      && (selection.zone === undefined || at(fields, 'AvailabilityZone') === selection.zone));
    if (!found) throw new Error(`${source.path} has no row for ${selection.instanceType} in ${selection.region}${selection.zone ? ` (${selection.zone})` : ''}`);
    const memory = gpuMemoryGb(at(found, 'GpuInfo'));
    const price = Number(at(found, 'Price'));
    if (memory === undefined || !(price > 0)) throw new Error(`${source.path}: ${selection.instanceType} has no GPU memory or price`);
    rows.push({
      provider: selection.provider, instanceType: selection.instanceType, region: selection.region,
      gpuName: at(found, 'AcceleratorName'), gpuCount: Number(at(found, 'AcceleratorCount')), gpuMemoryGb: memory, hourlyUsd: price,
      kilnGpu: selection.kilnGpu ?? null, source,
    });
  }
  return rows;
}

/** The TypeScript module catalog/provider-prices.ts holds. */
export function renderModule(rows: readonly PriceRow[]): string {
  return `// Generated by infra/price-table/generate.ts from a checkout of ${REPOSITORY}: do not edit by hand; run it again.
// On-demand prices of a few GPU instance types per provider, each row with its source (the CSV, the last
// commit that changed it, that commit's date, the day it was taken). POST /v1/providers/compare-costs reads them.

export interface ProviderPrice {
  readonly provider: string;
  readonly instanceType: string;
  readonly region: string;
  /** The GPU as the provider's catalog names it. */
  readonly gpuName: string;
  readonly gpuCount: number;
  /** Memory of one GPU, GiB, as the provider reports it. */
  readonly gpuMemoryGb: number;
  /** On-demand price of the whole instance per hour, USD. */
  readonly hourlyUsd: number;
  /** The Kiln GPU type (catalog/gpu-types.ts) it is, or null. */
  readonly kilnGpu: string | null;
  /** \`date\`: the commit's (null where it was not known); \`retrievedOn\`: the day the row was taken from it (UTC). */
  readonly source: { readonly repository: string; readonly path: string; readonly commit: string; readonly date: string | null; readonly retrievedOn: string };
}

export const PROVIDER_PRICES: readonly ProviderPrice[] = ${JSON.stringify(rows, null, 2)};
`;
}

function git(gitDir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
}

function main(): void {
  const { values } = parseArgs({ options: { 'git-dir': { type: 'string' }, rev: { type: 'string', default: 'HEAD' }, out: { type: 'string' } } });
  const gitDir = values['git-dir'];
  if (!gitDir) throw new Error('--git-dir <path to a checkout of skypilot-org/skypilot-catalog> is required');
  const rows: PriceRow[] = [];
  const retrievedOn = new Date().toISOString().slice(0, 10);
  for (const path of new Set(SELECTIONS.map((s) => s.path))) {
    const [commit, date] = git(gitDir, 'log', '-1', '--format=%H%n%cI', values.rev, '--', path).trim().split('\n') as [string, string];
    rows.push(...pickRows(git(gitDir, 'show', `${commit}:${path}`), SELECTIONS.filter((s) => s.path === path), { repository: REPOSITORY, path, commit, date, retrievedOn }));
  }
  const out = values.out ?? join(import.meta.dirname, '../../catalog/provider-prices.ts');
  writeFileSync(out, renderModule(rows));
  console.log(`${rows.length} rows written to ${out}`);
}

if (import.meta.filename === process.argv[1]) main();
