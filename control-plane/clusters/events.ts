// A cluster's capacity decisions (cluster-event.entity.ts), newest first, in cursor pages, for platform
// administrators: what Kiln's node pools did on their own and why.
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../core/errors.ts';
import type { CursorCodec } from '../core/pagination.ts';
import { ClusterEventSchema } from './cluster-event.entity.ts';
import { GpuClusterSchema } from './gpu-cluster.entity.ts';
import type { ClusterEventBody, ListClusterEventsInput } from './schemas.ts';

const ORDERING = 'cluster-events:-createdAt,-id';

export function createClusterEventService(deps: { cursors: CursorCodec }) {
  return {
    async list(em: EntityManager, clusterId: string, query: ListClusterEventsInput) {
      if (!await em.count(GpuClusterSchema, { id: clusterId, deletedAt: null })) throw new NotFoundError(`GPU cluster ${clusterId} not found`);
      const position = query.cursor ? JSON.parse(deps.cursors.decode(query.cursor, ORDERING)) as [string, string] : null;
      const rows = await em.find(ClusterEventSchema, {
        clusterId,
        ...(position ? { $or: [{ createdAt: { $lt: new Date(position[0]) } }, { createdAt: new Date(position[0]), id: { $lt: position[1] } }] } : {}),
      }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: query.limit + 1 });
      const events = rows.map((e): ClusterEventBody => ({
        id: e.id, type: e.type as ClusterEventBody['type'], deploymentId: e.deploymentId ?? null,
        data: e.payload.data as ClusterEventBody['data'], createdAt: e.createdAt.toISOString(),
      }));
      return deps.cursors.page(events, query.limit, ORDERING, (e) => [e.createdAt, e.id]);
    },
  };
}

export type ClusterEventService = ReturnType<typeof createClusterEventService>;
