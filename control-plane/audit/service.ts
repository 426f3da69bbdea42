// The audit trail: a record per use of an API key and per mutation by anyone, written after the request
// in its own statement (so a failed or rolled-back request is still recorded), together with the key's
// last-used time.
import type { MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../database/ids.ts';

export interface AuditEntry {
  organizationId: string;
  userId: string;
  apiKeyId: string | null;
  action: string;
  resourceType: string;
  resourceId: string | null;
  ipAddress: string;
  statusCode: number;
}

// One statement: atomic on its own, and one round trip on every audited request. A key's last-used time
// is kept to the minute: rewriting it on every request would serialize a busy key's requests on its row.
const RECORD_USE = `
  WITH record AS (
    INSERT INTO audit_log (id, created_at, organization_id, user_id, api_key_id, action, resource_type, resource_id, ip_address, status_code)
    VALUES (?, now(), ?, ?, ?, ?, ?, ?, ?, ?)
  )
  UPDATE api_key SET last_used_at = now()
  WHERE id = ? AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`;

export function createAuditService(deps: { orm: MikroORM }) {
  return {
    async record(entry: AuditEntry): Promise<void> {
      await deps.orm.em.getConnection().execute(RECORD_USE, [
        newId('aud'), entry.organizationId, entry.userId, entry.apiKeyId, entry.action, entry.resourceType, entry.resourceId, entry.ipAddress,
        entry.statusCode, entry.apiKeyId,
      ]);
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
