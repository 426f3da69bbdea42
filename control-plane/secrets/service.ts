// An organization's secrets: sealed on creation (the secrets key ring, lib/keys.ts), listed by name, type and
// last four characters only, tested against their service, deleted unless a live deployment mounts one.
// Values go nowhere else: not into answers, errors, logs or audit records (audit records name the secret).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { KeyRing } from '../../lib/secret-box.ts';
import { newId } from '../../lib/ids.ts';
import type { Principal } from '../auth/principal.ts';
import { ConflictError, InUseError, NotFoundError } from '../core/errors.ts';
import type { CursorCodec } from '../core/pagination.ts';
import { credentialOf, OrganizationSecretSchema, type Credential, type OrganizationSecret } from './organization-secret.entity.ts';
import type { CreateSecretInput, ListSecretsInput, SecretViewBody, TestSecretInput } from './schemas.ts';
import type { CredentialTester, TestResult } from './tester.ts';

export interface SecretServiceDeps {
  ring: KeyRing;
  cursors: CursorCodec;
  tester: CredentialTester;
}

const ORDERING = 'secrets:-createdAt,-id';

type Given = Exclude<TestSecretInput, { secretId: string }>;

/** The sealed part of a credential, its clear part (shown in lists) and the last four characters of its value. */
function split(input: Given): { secret: Record<string, string>; details: Record<string, string>; lastFour: string } {
  switch (input.type) {
    case 'huggingface_token': return { secret: { value: input.value }, details: {}, lastFour: input.value.slice(-4) };
    case 'object_store': return {
      secret: { accessKeyId: input.accessKeyId, secretAccessKey: input.secretAccessKey },
      details: { endpoint: input.endpoint, region: input.region, bucket: input.bucket }, lastFour: input.secretAccessKey.slice(-4),
    };
    case 'registry_password': return {
      secret: { password: input.password }, details: { registry: input.registry, username: input.username }, lastFour: input.password.slice(-4),
    };
  }
}

interface Use { id: string; name: string; env: string; secret_id: string }

/** The deployments not deleted that mount any of these secrets, with the variable each mounts it as. */
async function usesOf(em: EntityManager, organizationId: string, secretIds: readonly string[]): Promise<Use[]> {
  if (!secretIds.length) return [];
  return em.execute<Use[]>(`SELECT d.id, d.name, ref->>'name' AS env, ref->>'secretId' AS secret_id
    FROM deployment d CROSS JOIN LATERAL jsonb_array_elements(d.secrets) ref
    WHERE d.organization_id = ? AND d.deleted_at IS NULL AND ref->>'secretId' IN (${secretIds.map(() => '?').join(', ')})
    ORDER BY d.created_at, d.id`, [organizationId, ...secretIds]);
}

function view(secret: OrganizationSecret, uses: readonly Use[]): SecretViewBody {
  return {
    id: secret.id, name: secret.name, type: secret.type, lastFour: secret.lastFour, details: secret.details,
    createdAt: secret.createdAt.toISOString(), lastUsedAt: secret.lastUsedAt?.toISOString() ?? null,
    usedBy: uses.filter((u) => u.secret_id === secret.id).map((u) => ({ id: u.id, name: u.name, env: u.env })),
  };
}

export function createSecretService(deps: SecretServiceDeps) {
  async function find(em: EntityManager, principal: Principal, id: string): Promise<OrganizationSecret> {
    const secret = await em.findOne(OrganizationSecretSchema, { id, organization: principal.organizationId });
    if (!secret) throw new NotFoundError(`Secret ${id} not found`);
    return secret;
  }

  return {
    async create(em: EntityManager, principal: Principal, input: CreateSecretInput): Promise<SecretViewBody> {
      if (await em.count(OrganizationSecretSchema, { organization: principal.organizationId, name: input.name })) {
        throw new ConflictError(`A secret named ${input.name} already exists`, { fields: [{ field: 'name', message: 'already taken' }] });
      }
      const { secret, details, lastFour } = split(input);
      const row = em.create(OrganizationSecretSchema, {
        id: newId('sec'), organization: principal.organizationId, name: input.name, type: input.type,
        sealedValue: deps.ring.seal(JSON.stringify(secret)), lastFour, details, createdBy: principal.userId, createdAt: new Date(),
      });
      await em.flush();
      return view(row, []);
    },

    /** Newest first, in cursor pages. */
    async list(em: EntityManager, principal: Principal, query: ListSecretsInput) {
      const position = query.cursor ? JSON.parse(deps.cursors.decode(query.cursor, ORDERING)) as [string, string] : null;
      const rows = await em.find(OrganizationSecretSchema, {
        organization: principal.organizationId,
        ...(position ? { $or: [{ createdAt: { $lt: new Date(position[0]) } }, { createdAt: new Date(position[0]), id: { $lt: position[1] } }] } : {}),
      }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: query.limit + 1 });
      const uses = await usesOf(em, principal.organizationId, rows.map((r) => r.id));
      return deps.cursors.page(rows.map((r) => view(r, uses)), query.limit, ORDERING, (s) => [s.createdAt, s.id]);
    },

    /** 409 RESOURCE_IN_USE while a deployment not deleted mounts it (details name them). */
    async remove(em: EntityManager, principal: Principal, id: string) {
      const secret = await find(em, principal, id);
      const uses = await usesOf(em, principal.organizationId, [id]);
      if (uses.length) {
        throw new InUseError(`Secret ${secret.name} is mounted by ${uses.length === 1 ? 'deployment' : 'deployments'} ${uses.map((u) => u.name).join(', ')}: remove it from them, or delete them, first`, {
          deployments: uses.map((u) => ({ id: u.id, name: u.name, env: u.env })),
        });
      }
      em.remove(secret);
      await em.flush();
      return { id, deleted: true as const };
    },

    /** A stored secret (its last use recorded) or a given credential (not stored), asked of its service. */
    async test(em: EntityManager, principal: Principal, input: TestSecretInput): Promise<TestResult> {
      if ('secretId' in input) {
        const secret = await find(em, principal, input.secretId);
        let credential: Credential;
        try {
          credential = credentialOf(deps.ring, secret);
        } catch {
          return { ok: false, service: 'kiln.secrets', detail: `secret ${secret.name} cannot be opened: the key it was sealed under is no longer configured (KILN_SECRETS_PREVIOUS_KEYS)` };
        }
        const result = await deps.tester.test(credential);
        secret.lastUsedAt = new Date();
        await em.flush();
        return result;
      }
      return deps.tester.test(input);
    },

    /**
     * Re-seals every secret not sealed under the current key (after a rotation), one at a time and each by a
     * compare-and-set on its sealed value, so it needs no lock and no downtime: a value is readable under the
     * old key until the moment it is readable under the new one. Answers how many it re-sealed.
     */
    async resealAll(em: EntityManager): Promise<number> {
      let resealed = 0;
      const stale = await em.getConnection().execute<Array<{ id: string; sealed_value: string }>>(
        `SELECT id, sealed_value FROM organization_secret WHERE sealed_value NOT LIKE ?`, [`v2.${deps.ring.currentKeyId}.%`]);
      for (const row of stale) {
        const fresh = deps.ring.seal(deps.ring.open(row.sealed_value));
        const updated = await em.getConnection().execute(`UPDATE organization_secret SET sealed_value = ? WHERE id = ? AND sealed_value = ?`, [fresh, row.id, row.sealed_value], 'run');
        resealed += (updated as { affectedRows?: number }).affectedRows ?? 0;
      }
      return resealed;
    },
  };
}

export type SecretService = ReturnType<typeof createSecretService>;
