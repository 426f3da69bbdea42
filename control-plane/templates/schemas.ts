import { z } from 'zod';
import { DTYPES } from '../../catalog/deployment-rules.ts';
import { optionalOrgIdQuery, orgIdQuery } from '../core/organization-query.ts';
import { pageQuery } from '../core/pagination.ts';
import { CreateDeploymentRequest, DeploymentIdParams } from '../deployments/schemas.ts';
import { VISIBILITIES } from './template.entity.ts';
import { SUBSCRIPTION_REASONS } from './template-subscription.entity.ts';

// A template's configuration is a deployment's, field for field: the same schemas (one rule in one place),
// without the deployment's own name and the runtime (always vLLM).
const deploymentFields = CreateDeploymentRequest.shape;
const configurationFields = {
  model: deploymentFields.model,
  gpu: deploymentFields.gpu,
  replicas: deploymentFields.replicas,
  minReplicas: deploymentFields.minReplicas,
  maxReplicas: deploymentFields.maxReplicas,
  gpusPerReplica: deploymentFields.gpusPerReplica,
  contextLength: deploymentFields.contextLength,
  dtype: deploymentFields.dtype,
  vllmArgs: deploymentFields.vllmArgs,
};

export const TemplateConfigurationRequest = z.strictObject(configurationFields).meta({
  id: 'TemplateConfigurationRequest',
  description: 'What a deployment from the template runs, as a deployment\'s creation takes it; what is left out is settled as creation settles it (one replica, the fewest GPUs that hold the model, the longest context they hold, dtype auto).',
});

/** A new version: fields left out keep the latest version's (a new model or GPU type is sized afresh unless sized here). */
export const TemplateConfigurationChange = z.strictObject({
  ...configurationFields,
  model: configurationFields.model.optional(),
  gpu: configurationFields.gpu.optional(),
}).meta({ id: 'TemplateConfigurationChange', description: 'Changes from the latest version; fields left out keep its values.' });

const templateName = z.string().trim().min(1).max(100).meta({ example: 'Llama 8B chat' });
const description = z.string().trim().max(2000).meta({ description: 'What the template is for.' });
const notes = z.string().trim().max(2000).optional().meta({ description: 'What this version changes, in your words.' });
const visibility = z.enum(VISIBILITIES).meta({ description: 'private: your organization alone sees it; public: everyone reads it, your organization alone changes it.' });

export const CreateTemplateRequest = z.strictObject({
  name: templateName,
  description: description.default(''),
  visibility: visibility.default('private'),
  configuration: TemplateConfigurationRequest,
  notes,
}).meta({ id: 'CreateTemplateRequest' });

export const NewTemplateVersionRequest = z.strictObject({
  configuration: TemplateConfigurationChange,
  notes,
}).meta({ id: 'NewTemplateVersionRequest' });

export const ShareAsTemplateRequest = z.strictObject({
  templateId: z.string().max(64).optional().meta({ description: 'A template of your organization to add a version to; absent: a new template.' }),
  name: templateName.optional().meta({ description: 'The new template\'s name (required without templateId).' }),
  description: description.optional(),
  visibility: visibility.optional().meta({ description: 'The new template\'s visibility; private when absent.' }),
  notes,
}).meta({ id: 'ShareAsTemplateRequest' });

export const DeployTemplateRequest = z.strictObject({
  name: deploymentFields.name,
  version: z.number().int().min(1).optional().meta({ description: 'The version to deploy; absent: the latest.' }),
}).meta({ id: 'DeployTemplateRequest' });

export const StarRequest = z.strictObject({}).meta({ id: 'StarRequest' });

export const TemplateIdParams = z.object({ id: z.string().max(64) });
export { DeploymentIdParams };

const model = z.string().max(255).optional().meta({ description: 'Only templates of this model (its latest version\'s), compared without case.' });
/** GET /v1/templates/deploy and /v1/models/templates: the reference rows list orgId. */
export const ListTemplatesQuery = z.object({ ...pageQuery, model, ...orgIdQuery });
/** GET /api/models/templates: the platform surface names the organization in X-Organization-ID. */
export const ListTemplatesPlatformQuery = z.object({ ...pageQuery, model, ...optionalOrgIdQuery });
export const ListVersionsQuery = z.object({ ...pageQuery, ...optionalOrgIdQuery });
export const StarQuery = z.object({ ...orgIdQuery });
export const PreviewQuery = z.object({
  version: z.coerce.number().int().min(1).optional().meta({ description: 'The version to preview; absent: the latest.' }),
  ...orgIdQuery,
});

export const TemplateConfiguration = z.object({
  model: z.string(),
  gpu: z.string(),
  gpusPerReplica: z.number().int(),
  replicas: z.number().int(),
  minReplicas: z.number().int(),
  maxReplicas: z.number().int(),
  contextLength: z.number().int().nullable().meta({ description: 'null: vLLM takes the model\'s own (a model Kiln has no figures for).' }),
  dtype: z.enum(DTYPES),
  vllmArgs: z.array(z.string()),
}).meta({ id: 'TemplateConfiguration' });

export const TemplateView = z.object({
  id: z.string().meta({ example: 'tpl_0123456789abcdefghij', description: 'tpl_...; catalog presets: preset_...' }),
  name: z.string(),
  description: z.string(),
  visibility: z.enum(VISIBILITIES),
  source: z.enum(['catalog', 'organization']).meta({ description: 'catalog: a preset Kiln ships for a catalog model; organization: an organization\'s template.' }),
  owned: z.boolean().meta({ description: 'Your organization\'s: you may add versions.' }),
  latestVersion: z.number().int(),
  configuration: TemplateConfiguration.meta({ description: 'The latest version\'s configuration.' }),
  starred: z.boolean().meta({ description: 'You starred it.' }),
  stars: z.number().int(),
  createdAt: z.iso.datetime().nullable().meta({ description: 'null for catalog presets.' }),
  updatedAt: z.iso.datetime().nullable().meta({ description: 'null for catalog presets.' }),
}).meta({ id: 'Template' });

export const TemplateVersionView = z.object({
  templateId: z.string(),
  version: z.number().int(),
  configuration: TemplateConfiguration,
  notes: z.string().nullable(),
  createdAt: z.iso.datetime().nullable().meta({ description: 'null for catalog presets.' }),
}).meta({ id: 'TemplateVersion' });

export const DeletedTemplate = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'DeletedTemplate' });

export const StarView = z.object({
  templateId: z.string(),
  starred: z.boolean(),
  stars: z.number().int(),
}).meta({ id: 'TemplateStar' });

const change = z.object({ field: z.string(), from: z.unknown(), to: z.unknown() }).meta({ id: 'ConfigurationChange' });

export const TemplateDeployPreview = z.object({
  templateId: z.string(),
  templateName: z.string(),
  version: z.number().int(),
  deployment: TemplateConfiguration.extend({ runtime: z.literal('vllm') }).meta({ description: 'What POST /v1/templates/{id}/deploy would create.' }),
  gpuType: z.object({ id: z.string(), name: z.string(), hourlyPriceUsd: z.number() }),
  gpus: z.number().int().meta({ description: 'GPUs held at the starting replica count: replicas x gpusPerReplica.' }),
  hourlyCostUsd: z.number().meta({ description: 'GPU price x gpusPerReplica x replicas.' }),
  maxHourlyCostUsd: z.number().meta({ description: 'The same at maxReplicas.' }),
  credits: z.object({
    requiredCents: z.number().int().meta({ description: 'One hour at the starting replica count: what creation requires.' }),
    availableCents: z.number().int(),
    sufficient: z.boolean(),
  }),
}).meta({ id: 'TemplateDeployPreview' });

export const OutdatedDeployment = z.object({
  deploymentId: z.string(),
  deploymentName: z.string(),
  templateId: z.string(),
  templateName: z.string(),
  currentVersion: z.number().int(),
  latestVersion: z.number().int(),
  changes: z.array(change).meta({ description: 'What the latest version changes from the deployment\'s version.' }),
}).meta({ id: 'OutdatedDeployment' });

export const TemplateUpdates = z.object({
  subscriptions: z.array(z.object({
    templateId: z.string(),
    templateName: z.string(),
    latestVersion: z.number().int(),
    reason: z.enum(SUBSCRIPTION_REASONS).meta({ description: 'starred, deployed (from the template) or subscribed (asked for).' }),
    subscribedAt: z.iso.datetime(),
  })),
  unseen: z.array(z.object({
    id: z.string().meta({ example: 'unt_0123456789abcdefghij' }),
    templateId: z.string(),
    templateName: z.string(),
    version: z.number().int(),
    previousVersion: z.number().int(),
    changes: z.array(change),
    createdAt: z.iso.datetime(),
  })).meta({ description: 'New versions of subscribed templates you have not marked seen, newest first (at most 100).' }),
}).meta({ id: 'TemplateUpdates' });

const ids = (what: string) => z.array(z.string().max(64)).max(100).optional().meta({ description: what });
export const UpdateTemplateUpdatesRequest = z.strictObject({
  subscribe: ids('Template ids to hear of new versions of.'),
  unsubscribe: ids('Template ids to stop hearing of.'),
  seen: z.union([z.array(z.string().max(64)).max(100), z.literal('all')]).optional()
    .meta({ description: 'Update ids (unseen[].id) to mark seen, or "all".' }),
}).refine((b) => b.subscribe !== undefined || b.unsubscribe !== undefined || b.seen !== undefined, { message: 'give subscribe, unsubscribe or seen' })
  .meta({ id: 'UpdateTemplateUpdatesRequest' });

export const TemplateUpdatesQuery = z.object({ ...optionalOrgIdQuery });

export type TemplateConfigurationInput = z.output<typeof TemplateConfigurationRequest>;
export type TemplateConfigurationChangeInput = z.output<typeof TemplateConfigurationChange>;
export type CreateTemplateInput = z.output<typeof CreateTemplateRequest>;
export type NewTemplateVersionInput = z.output<typeof NewTemplateVersionRequest>;
export type ShareAsTemplateInput = z.output<typeof ShareAsTemplateRequest>;
export type DeployTemplateInput = z.output<typeof DeployTemplateRequest>;
export type ListTemplatesInput = z.output<typeof ListTemplatesPlatformQuery>;
export type ListVersionsInput = z.output<typeof ListVersionsQuery>;
export type UpdateTemplateUpdatesInput = z.output<typeof UpdateTemplateUpdatesRequest>;
export type TemplateConfigurationBody = z.output<typeof TemplateConfiguration>;
export type TemplateViewBody = z.output<typeof TemplateView>;
export type TemplateVersionViewBody = z.output<typeof TemplateVersionView>;
export type TemplateDeployPreviewBody = z.output<typeof TemplateDeployPreview>;
export type OutdatedDeploymentBody = z.output<typeof OutdatedDeployment>;
export type TemplateUpdatesBody = z.output<typeof TemplateUpdates>;
