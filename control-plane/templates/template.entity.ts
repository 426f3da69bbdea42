import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

export const VISIBILITIES = ['private', 'public'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/**
 * A named deployment configuration an organization keeps in numbered, immutable versions
 * (TemplateVersion). Private: its organization alone sees it; public: everyone reads it, its organization
 * alone changes it (the row-level security policy lets every tenant select public rows, write none).
 */
export const TemplateSchema = defineEntity({
  name: 'Template',
  extends: BaseSchema,
  // The unique (organization, name) is written in the migration.
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    name: p.string(),
    description: p.text(),
    visibility: p.string().$type<Visibility>(),
    /** The highest version's number: versions count from 1 without gaps. */
    latestVersion: p.integer(),
    /** Who created it (a user id); kept as text so a departed user's templates stay. */
    createdBy: p.string(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type Template = InferEntity<typeof TemplateSchema>;
