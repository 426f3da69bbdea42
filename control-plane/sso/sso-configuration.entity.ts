import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import type { Role } from '../core/permissions.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import type { SsoProviderKind } from './providers.ts';

/** An organization's OpenID Connect identity provider: at most one per organization. */
export const SsoConfigurationSchema = defineEntity({
  name: 'SsoConfiguration',
  extends: BaseSchema,
  uniques: [{ properties: ['organization'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    provider: p.string().$type<SsoProviderKind>(),
    issuer: p.text(),
    clientId: p.string(),
    /** AES-256-GCM (lib/secret-box.ts); never returned. */
    sealedClientSecret: p.text().hidden(),
    /** Lower-case domains; an SSO login's e-mail must be in one of them. */
    allowedDomains: p.json<string[]>(),
    defaultRole: p.string().$type<Role>(),
    jitProvisioning: p.boolean(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type SsoConfiguration = InferEntity<typeof SsoConfigurationSchema>;
