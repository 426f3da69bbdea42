import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import type { KeyRing } from '../../lib/secret-box.ts';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/** What kind of credential a secret is: which service POST /secrets/test asks, and which fields it has. */
export const SECRET_TYPES = ['huggingface_token', 'object_store', 'registry_password'] as const;
export type SecretType = (typeof SECRET_TYPES)[number];

/**
 * A credential of an organization, sealed under the secrets key ring (lib/keys.ts organizationSecretsKeyRing):
 * `sealedValue` holds the secret fields as JSON, `details` the fields that are no secret (an endpoint, a user
 * name). Only `lastFour` of the value is ever shown.
 */
export const OrganizationSecretSchema = defineEntity({
  name: 'OrganizationSecret',
  extends: BaseSchema,
  uniques: [{ properties: ['organization', 'name'] }],
  indexes: [{ properties: ['organization', 'createdAt'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    name: p.string(),
    type: p.string().$type<SecretType>(),
    sealedValue: p.text(),
    lastFour: p.string(),
    details: p.json<Record<string, string>>(),
    createdBy: p.string().nullable(),
    lastUsedAt: p.datetime(3).nullable(),
  },
});

export type OrganizationSecret = InferEntity<typeof OrganizationSecretSchema>;

/** A credential's fields: the secret ones (opened, or as a test is given them) and the others. */
export type Credential =
  | { type: 'huggingface_token'; value: string }
  | { type: 'object_store'; endpoint: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string }
  | { type: 'registry_password'; registry: string; username: string; password: string };

/** A stored secret's credential, opened (the API's tests and the worker's rollouts). Throws if its key is gone. */
export function credentialOf(ring: KeyRing, secret: Pick<OrganizationSecret, 'type' | 'sealedValue' | 'details'>): Credential {
  const opened = JSON.parse(ring.open(secret.sealedValue)) as Record<string, string>;
  return { ...secret.details, ...opened, type: secret.type } as Credential;
}

/** The value a deployment's environment variable takes from a secret: its token or password (object-store credentials are no single value). */
export function mountedValue(credential: Credential): string | undefined {
  if (credential.type === 'huggingface_token') return credential.value;
  if (credential.type === 'registry_password') return credential.password;
  return undefined;
}
