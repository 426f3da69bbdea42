import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

export const DEPLOYMENT_STATUSES = [
  'pending', 'deploying', 'running', 'scaling', 'updating', 'stopping', 'stopped', 'failed', 'deleting', 'deleted',
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

export const DeploymentSchema = defineEntity({
  name: 'Deployment',
  extends: BaseSchema,
  // Keyset pagination walks (organization, created_at, id); the unique live name is a partial index
  // written in the migration.
  indexes: [{ properties: ['organization', 'createdAt', 'id'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    name: p.string(),
    model: p.string(),
    runtime: p.string(),
    gpu: p.string(),
    status: p.string().$type<DeploymentStatus>(),
    endpoint: p.string(),
    replicas: p.integer(),
    minReplicas: p.integer(),
    maxReplicas: p.integer(),
    currentReplicas: p.integer(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
    deletedAt: p.datetime().nullable(),
  },
});

export type Deployment = InferEntity<typeof DeploymentSchema>;
