// The deployment activities' view of organizations' secrets: the values a rollout mounts, opened under the
// secrets key ring, and the time each was last used. What fails here names the secret, never its value.
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure } from '@temporalio/activity';
import type { KeyRing } from '../../lib/secret-box.ts';
import { credentialOf, mountedValue, OrganizationSecretSchema } from '../../control-plane/secrets/organization-secret.entity.ts';
import type { SecretReference } from '../contract/deployment.ts';

export function secretValues(orm: MikroORM, ring: KeyRing) {
  return {
    async open(organizationId: string, references: readonly SecretReference[]): Promise<Record<string, string>> {
      const em = orm.em.fork();
      const rows = await em.find(OrganizationSecretSchema, { id: { $in: [...new Set(references.map((r) => r.secretId))] }, organization: organizationId });
      const env: Record<string, string> = {};
      for (const reference of references) {
        const row = rows.find((r) => r.id === reference.secretId);
        // Waiting brings no deleted secret back, nor a key no longer configured: fail for good, with the reason.
        if (!row) throw ApplicationFailure.nonRetryable(`secret ${reference.secretId}, mounted as ${reference.name}, does not exist`, 'SecretMissing');
        let value: string | undefined;
        try {
          value = mountedValue(credentialOf(ring, row));
        } catch {
          throw ApplicationFailure.nonRetryable(`secret ${row.name} cannot be opened: the key it was sealed under is not configured (KILN_SECRETS_PREVIOUS_KEYS)`, 'SecretSealed');
        }
        if (value === undefined) throw ApplicationFailure.nonRetryable(`secret ${row.name} (${row.type}) holds no single value to mount as ${reference.name}`, 'SecretNotMountable');
        env[reference.name] = value;
      }
      const now = new Date();
      for (const row of rows) row.lastUsedAt = now;
      await em.flush();
      return env;
    },
  };
}
