// The rules a deployment's secret references follow (deployments/ checks them on create and update): each
// names a secret of the deployment's own organization that holds a single value to mount.
import type { EntityManager } from '@mikro-orm/postgresql';
import { invalidField } from '../core/errors.ts';
import type { SecretReference } from '../../workflows/contract/deployment.ts';
import { OrganizationSecretSchema } from './organization-secret.entity.ts';

/** 422 on `secrets` unless every referenced secret is the organization's and mountable; answers the references as stored. */
export async function checkSecretReferences(em: EntityManager, organizationId: string, references: readonly SecretReference[]): Promise<SecretReference[]> {
  if (!references.length) return [];
  const ids = [...new Set(references.map((r) => r.secretId))];
  const found = await em.find(OrganizationSecretSchema, { id: { $in: ids }, organization: organizationId }, { fields: ['id', 'name', 'type'] });
  for (const reference of references) {
    const secret = found.find((s) => s.id === reference.secretId);
    // Another organization's secret is not found, as if it did not exist.
    if (!secret) throw invalidField('secrets', `secret ${reference.secretId} does not exist in this organization`);
    if (secret.type === 'object_store') {
      throw invalidField('secrets', `secret ${secret.name} holds object-store credentials, which are no single value to mount as ${reference.name}; mount a huggingface_token or registry_password secret`);
    }
  }
  return references.map((r) => ({ name: r.name, secretId: r.secretId }));
}
