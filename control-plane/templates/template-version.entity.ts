import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { TemplateSchema } from './template.entity.ts';

/** One immutable version of a template: the whole deployment configuration it creates. */
export const TemplateVersionSchema = defineEntity({
  name: 'TemplateVersion',
  extends: BaseSchema,
  // The unique (template, version) is written in the migration.
  properties: {
    template: () => p.manyToOne(TemplateSchema).ref(),
    /** The template's organization again, so row-level security holds versions as it holds templates. */
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    version: p.integer(),
    model: p.string(),
    gpu: p.string(),
    gpusPerReplica: p.integer(),
    replicas: p.integer(),
    minReplicas: p.integer(),
    maxReplicas: p.integer(),
    /** null: the longest the GPUs hold, settled when a deployment is created from it. */
    contextLength: p.integer().nullable(),
    dtype: p.string(),
    vllmArgs: p.json<string[]>(),
    /** What changed, in the author's words. */
    notes: p.text().nullable(),
    createdBy: p.string(),
  },
});

export type TemplateVersion = InferEntity<typeof TemplateVersionSchema>;
