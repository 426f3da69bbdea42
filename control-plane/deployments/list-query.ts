// The deployment list (GET /v1/deployments, /api/deployments, GraphQL's deployments): the organization's live
// deployments filtered by status and creation date, sorted by the asked fields, in signed keyset-cursor pages.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AutoscalingPolicy } from '../../catalog/autoscaling.ts';
import type { Dtype } from '../../catalog/deployment-rules.ts';
import type { Principal } from '../auth/principal.ts';
import type { CursorCodec } from '../core/pagination.ts';
import type { DeploymentStatus } from './deployment.entity.ts';
import type { ListDeploymentsInput, SORT_FIELDS } from './schemas.ts';
import { deploymentView } from './view.ts';

type SortColumn = 'createdAt' | 'updatedAt' | 'name' | 'status' | 'gpu' | 'id';
type Direction = 'asc' | 'desc';
const DATE_COLUMNS = new Set<SortColumn>(['createdAt', 'updatedAt']);

const SORT_COLUMNS: Record<(typeof SORT_FIELDS)[number], SortColumn> = {
  created_at: 'createdAt', updated_at: 'updatedAt', name: 'name', status: 'status', gpu: 'gpu',
};

/** The deployment table's columns the list reads, as Kysely sees them. */
interface DeploymentTable {
  id: string; organization_id: string; deleted_at: string | null; name: string; model: string; runtime: string; gpu: string;
  status: DeploymentStatus; endpoint: string; replicas: number; current_replicas: number; min_replicas: number; max_replicas: number; autoscaling: AutoscalingPolicy;
  gpus_per_replica: number; context_length: number | null; dtype: Dtype; vllm_args: string[];
  failure_reason: string | null; template_id: string | null; template_version: number | null; created_at: string | Date; updated_at: string | Date;
}

const COLUMNS = {
  createdAt: 'created_at', updatedAt: 'updated_at', name: 'name', status: 'status', gpu: 'gpu', id: 'id',
} as const satisfies Record<SortColumn, keyof DeploymentTable>;

function positionValue(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/** The signed cursor's position: one string per sort key (a signed cursor is well formed by construction). */
function positionFrom(decoded: string, length: number): string[] {
  const position = JSON.parse(decoded) as unknown;
  if (!Array.isArray(position) || position.length !== length) throw new Error('cursor position does not match its ordering');
  return position as string[];
}

export interface DeploymentListDeps {
  cursors: CursorCodec;
}

export function createDeploymentList(deps: DeploymentListDeps) {
  return async function list(em: EntityManager, principal: Principal, query: ListDeploymentsInput) {
    const ordering = query.sort.map(([field, dir]) => (dir === 'desc' ? '-' : '') + field).join(',');
    // Sort columns, then the id as tie-break: every row has a distinct position.
    const keys: Array<readonly [SortColumn, Direction]> = [...query.sort.map(([field, dir]) => [SORT_COLUMNS[field], dir] as const), ['id', query.sort.at(-1)![1]]];
    const after = query.cursor ? positionFrom(deps.cursors.decode(query.cursor, ordering), keys.length) : undefined;
    // The list is on every dashboard refresh: one parameterized query built with Kysely (the query builder
    // and its row mapping cost several times more), one row past the page to learn whether another follows.
    let select = em.getKysely<{ deployment: DeploymentTable }>().selectFrom('deployment')
      .select(['id', 'name', 'model', 'runtime', 'gpu', 'status', 'endpoint', 'replicas', 'current_replicas as currentReplicas',
        'min_replicas as minReplicas', 'max_replicas as maxReplicas', 'autoscaling', 'gpus_per_replica as gpusPerReplica', 'context_length as contextLength',
        'dtype', 'vllm_args as vllmArgs', 'failure_reason as failureReason', 'template_id as templateId', 'template_version as templateVersion', 'created_at as createdAt',
        'updated_at as updatedAt'])
      .where('organization_id', '=', principal.organizationId)
      .where('deleted_at', 'is', null);
    if (query.status) select = select.where('status', 'in', query.status);
    if (query.created_after) select = select.where('created_at', '>=', new Date(`${query.created_after}T00:00:00Z`));
    if (query.created_before) select = select.where('created_at', '<', new Date(`${query.created_before}T00:00:00Z`));
    // Rows strictly after the position in the (mixed-direction) ordering: a keyset condition. The bound on
    // the first key alone lets PostgreSQL start its index scan at the position instead of filtering up to it.
    if (after) {
      const value = (i: number) => (DATE_COLUMNS.has(keys[i]![0]) ? new Date(after[i]!) : after[i]!);
      const [first, firstDir] = keys[0]!;
      select = select.where((eb) => eb.and([
        eb(COLUMNS[first], firstDir === 'asc' ? '>=' : '<=', value(0)),
        eb.or(keys.map(([column, dir], i) => eb.and([
          ...keys.slice(0, i).map(([before], j) => eb(COLUMNS[before], '=', value(j))),
          eb(COLUMNS[column], dir === 'asc' ? '>' : '<', value(i)),
        ]))),
      ]));
    }
    for (const [column, dir] of keys) select = select.orderBy(COLUMNS[column], dir);
    // Timestamps arrive as the driver hands them over (text): dates from here on.
    const rows = (await select.limit(query.limit + 1).execute())
      .map((row) => ({ ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) }));
    const page = deps.cursors.page(rows, query.limit, ordering, (last) => keys.map(([column]) => positionValue(last[column])));
    return { ...page, items: page.items.map((d) => deploymentView(d)) };
  };
}
