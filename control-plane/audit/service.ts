// The audit trail: one record per use of an API key, written in its own transaction after the request
// (so a failed or rolled-back request is still recorded), along with the key's last-used time.
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApiKeySchema } from '../api-keys/api-key.entity.ts';
import { newId } from '../database/ids.ts';
import { AuditLogSchema } from './audit-log.entity.ts';

export interface ApiKeyUse {
  organizationId: string;
  userId: string;
  apiKeyId: string;
  action: string;
  resourceType: string;
  resourceId: string | null;
  ipAddress: string;
  statusCode: number;
}

export function createAuditService(deps: { orm: MikroORM }) {
  return {
    async recordApiKeyUse(use: ApiKeyUse): Promise<void> {
      const now = new Date();
      await deps.orm.em.fork().transactional(async (em) => {
        await em.insert(AuditLogSchema, { id: newId('aud'), createdAt: now, ...use });
        await em.nativeUpdate(ApiKeySchema, { id: use.apiKeyId }, { lastUsedAt: now });
      });
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
