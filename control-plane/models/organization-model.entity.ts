import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import type { CatalogModel } from '../../catalog/models.ts';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/** What is known of a model outside the catalog: the catalog's facts, each one possibly unknown. */
export type KnownFacts = { readonly [K in keyof Omit<CatalogModel, 'id'>]?: CatalogModel[K] };

/**
 * A model reference an organization validated or deployed (its registry): a Hugging Face id (with its
 * revision, if pinned) or an s3/gs/pvc location, with the organization's own defaults and, for Hub models,
 * the facts the Hub gave, kept so a lookup asks the Hub once.
 */
export const OrganizationModelSchema = defineEntity({
  name: 'OrganizationModel',
  extends: BaseSchema,
  // One row per organization and reference, as modelKey compares them (Hub ids case-insensitively);
  // search reads an organization's rows through this index.
  uniques: [{ properties: ['organization', 'referenceKey'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    /** As first given, hf:// left out: `org/name`, `org/name@rev`, `s3://bucket/path`, `pvc://claim/path`. */
    reference: p.string(),
    referenceKey: p.string(),
    displayName: p.string().nullable(),
    description: p.text().nullable(),
    defaultVllmArgs: p.json<string[]>(),
    defaultContextLength: p.integer().nullable(),
    /** The Hub's facts (null: none asked for yet, or not a Hub model). */
    facts: p.json<KnownFacts>().nullable(),
    factsFetchedAt: p.datetime(3).nullable(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type OrganizationModel = InferEntity<typeof OrganizationModelSchema>;
