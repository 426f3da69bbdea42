// The GraphQL schema, built with Pothos over the same area services the REST routes call. Each field asks
// for the permission its REST route declares (ctx.authorize, by operationId) and each mutation is audited as
// its REST route is (ctx.audited); inputs are checked with the REST routes' own zod schemas (parseInput), so
// a rule holds the same way on both, and the object types are the REST routes' zod views (view-types.ts), so
// an answer has the same fields on both.
import SchemaBuilder, { type ObjectRef } from '@pothos/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { GraphQLSchema } from 'graphql';
import type { Principal } from '../auth/principal.ts';
import type { ApiKeyService } from '../api-keys/service.ts';
import { ApiKeyView, CreateApiKeyRequest, RevokedApiKey as RevokedApiKeyView } from '../api-keys/schemas.ts';
import type { BillingService } from '../billing/service.ts';
import { UsageView } from '../billing/schemas.ts';
import { PaginationSchema, type Page } from '../core/pagination.ts';
import type { CostService } from '../costs/service.ts';
import type { DeploymentService } from '../deployments/service.ts';
import {
  CreateDeploymentRequest, DeletedDeployment as DeletedDeploymentView, DeploymentView, ListDeploymentsQuery, UpdateDeploymentRequest,
} from '../deployments/schemas.ts';
import { parseInput } from '../http/validate.ts';
import type { ModelService } from '../models/service.ts';
import { ListModelsQuery, ModelView } from '../models/schemas.ts';
import type { MonitoringService } from '../monitoring/service.ts';
import { MetricsRangeQuery } from '../monitoring/schemas.ts';
import { MemberView } from '../team/schemas.ts';
import type { TeamService } from '../team/service.ts';
import type { TemplateService } from '../templates/service.ts';
import { ListTemplatesPlatformQuery, TemplateView } from '../templates/schemas.ts';
import type { DeploymentEventView, Loaders } from './loaders.ts';
import { objectTypeOfView } from './view-types.ts';

export interface GraphQLContext {
  principal: Principal;
  /** The request's EntityManager: resolvers fork it, since sibling fields run at the same time. */
  em: EntityManager;
  loaders: Loaders;
  /** Throws FORBIDDEN unless the caller's role and scope grant what the REST route `operationId` declares. */
  authorize(operationId: string): void;
  /** Runs a mutation (its permission and input checks included) and writes the audit record the REST route `operationId` writes, whatever the outcome. */
  audited<T>(operationId: string, resourceId: string | undefined, run: () => Promise<T>): Promise<T>;
}

export interface SchemaServices {
  deployments: DeploymentService;
  models: ModelService;
  templates: TemplateService;
  apiKeys: ApiKeyService;
  team: TeamService;
  billing: BillingService;
  costs: CostService;
  monitoring: MonitoringService;
}

type CreatedApiKeyBody = Awaited<ReturnType<ApiKeyService['create']>>;
type DeletedDeploymentBody = Awaited<ReturnType<DeploymentService['remove']>>;
interface Types {
  Context: GraphQLContext;
  Scalars: { JSON: { Input: unknown; Output: unknown } };
}
type KilnSchemaTypes = PothosSchemaTypes.ExtendDefaultTypes<Types>;

/** GraphQL gives null for an argument sent as null: the REST schemas know only absent fields. */
function present<T extends Record<string, unknown>>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null && value !== undefined)) as Partial<T>;
}

export function buildSchema(services: SchemaServices): GraphQLSchema {
  const builder = new SchemaBuilder<Types>({});

  builder.scalarType('JSON', {
    description: 'Any JSON value: the same shape the REST route answers (see the OpenAPI document).',
    serialize: (value) => value,
    parseValue: (value) => value,
  });

  // The REST views' own fields (view-types.ts); below, the fields GraphQL adds to them.
  const Deployment = objectTypeOfView(builder, 'Deployment', DeploymentView, { description: 'A model served by vLLM on GPUs (GET /api/deployments/{id}).' });
  const DeploymentEvent = builder.objectRef<DeploymentEventView>('DeploymentEvent');
  builder.objectFields(Deployment, (t) => ({
    events: t.field({
      type: [DeploymentEvent],
      description: 'The latest lifecycle events, newest first (at most 20), loaded for a whole page at once.',
      resolve: (deployment, _args, ctx) => ctx.loaders.events.load(deployment.id),
    }),
    cost: t.field({
      type: 'JSON',
      description: 'What it costs (GET /v1/deployments/{id}/pricing).',
      resolve: (deployment, _args, ctx) => {
        ctx.authorize('getDeploymentPricingV1');
        return services.costs.deploymentPricing(ctx.em.fork(), ctx.principal, deployment.id);
      },
    }),
    metrics: t.field({
      type: 'JSON',
      description: 'Its series over a range (GET /v1/deployments/{id}/metrics): from and to default to the last hour.',
      args: { from: t.arg.string(), to: t.arg.string(), step: t.arg.int() },
      resolve: (deployment, args, ctx) => {
        ctx.authorize('getDeploymentMetricsV1');
        const range = parseInput(MetricsRangeQuery, { ...present(args), orgId: ctx.principal.organizationId }, 'query');
        return services.monitoring.deploymentMetrics(ctx.em.fork(), ctx.principal, deployment.id, range);
      },
    }),
  }));

  // No REST route answers a deployment's events as such: their type is GraphQL's own.
  DeploymentEvent.implement({
    description: 'A lifecycle event of a deployment (deployment.running, deployment.failed, deployment.scaled, ...).',
    fields: (t) => ({
      id: t.exposeID('id'),
      type: t.exposeString('type'),
      generation: t.exposeInt('generation'),
      createdAt: t.exposeString('createdAt'),
      payload: t.expose('payload', { type: 'JSON', description: 'The webhook payload (event, timestamp, data).' }),
      deployment: t.field({ type: Deployment, resolve: (event, _args, ctx) => ctx.loaders.deployment.load(event.deploymentId) }),
    }),
  });

  /** A cursor page: the REST lists' pagination fields beside the page's items. */
  const page = <T>(name: string, item: ObjectRef<KilnSchemaTypes, T>) => {
    const ref = objectTypeOfView<KilnSchemaTypes, typeof PaginationSchema, Page<T>>(builder, name, PaginationSchema);
    builder.objectFields(ref, (t) => ({ items: t.field({ type: [item], resolve: (p) => p.items }) }));
    return ref;
  };

  const Model = objectTypeOfView(builder, 'Model', ModelView, { description: 'A model of the catalog or of the organization (GET /api/models).' });
  const Template = objectTypeOfView(builder, 'Template', TemplateView, {
    description: 'A deployment template: catalog presets, public templates and the organization\'s.',
  });

  const ApiKey = objectTypeOfView(builder, 'ApiKey', ApiKeyView, { description: 'An API key (never its value).' });
  const CreatedApiKey = builder.objectRef<CreatedApiKeyBody>('CreatedApiKey').implement({
    description: 'A new API key and its value: shown this once, never again.',
    fields: (t) => ({
      apiKey: t.field({ type: ApiKey, resolve: (created) => created }),
      key: t.exposeString('key'),
    }),
  });

  const Member = objectTypeOfView(builder, 'Member', MemberView, { description: 'A member of the organization with their role.', id: 'userId' });

  const Usage = objectTypeOfView(builder, 'Usage', UsageView, {
    description: 'This billing period\'s GPU usage and cost (GET /api/billing/usage).',
    objects: { deployments: { name: 'UsageLine', id: 'deploymentId' } },
  });
  // The fields GraphQL had flat before it derived Usage from the view, kept for its clients.
  builder.objectFields(Usage, (t) => ({
    periodStart: t.string({ resolve: (u) => u.period.start }),
    periodEnd: t.string({ resolve: (u) => u.period.end }),
    projectedPeriodEndCents: t.int({ resolve: (u) => u.projection.periodEndCents }),
  }));

  const DeploymentPage = page('DeploymentPage', Deployment);
  const ModelPage = page('ModelPage', Model);
  const TemplatePage = page('TemplatePage', Template);

  builder.queryType({
    fields: (t) => ({
      deployments: t.field({
        type: DeploymentPage,
        description: 'The organization\'s deployments, newest first, in cursor pages (as GET /api/deployments).',
        args: { limit: t.arg.int(), cursor: t.arg.string(), status: t.arg.string() },
        resolve: (_root, args, ctx) => {
          ctx.authorize('listDeployments');
          return services.deployments.list(ctx.em.fork(), ctx.principal, parseInput(ListDeploymentsQuery, present(args), 'query'));
        },
      }),
      deployment: t.field({
        type: Deployment,
        nullable: true,
        description: 'One deployment; another organization\'s id is NOT_FOUND.',
        args: { id: t.arg.id({ required: true }) },
        resolve: (_root, args, ctx) => {
          ctx.authorize('getDeployment');
          return services.deployments.get(ctx.em.fork(), ctx.principal, String(args.id));
        },
      }),
      models: t.field({
        type: ModelPage,
        description: 'The model catalog beside the organization\'s models (as GET /api/models).',
        args: { q: t.arg.string(), limit: t.arg.int(), cursor: t.arg.string() },
        resolve: (_root, args, ctx) => {
          ctx.authorize('listModels');
          return services.models.search(ctx.em.fork(), ctx.principal, parseInput(ListModelsQuery, present(args), 'query'));
        },
      }),
      templates: t.field({
        type: TemplatePage,
        description: 'Templates the organization can deploy (as GET /api/models/templates).',
        args: { model: t.arg.string(), limit: t.arg.int(), cursor: t.arg.string() },
        resolve: (_root, args, ctx) => {
          ctx.authorize('listModelTemplatesPlatform');
          return services.templates.list(ctx.em.fork(), ctx.principal, parseInput(ListTemplatesPlatformQuery, present(args), 'query'));
        },
      }),
      apiKeys: t.field({
        type: [ApiKey],
        description: 'The organization\'s API keys, never their values (as GET /v1/settings/api-keys).',
        resolve: (_root, _args, ctx) => {
          ctx.authorize('listApiKeys');
          return services.apiKeys.list(ctx.em.fork(), ctx.principal);
        },
      }),
      members: t.field({
        type: [Member],
        description: 'Members of the organization with their roles (as GET /v1/team/members).',
        resolve: (_root, _args, ctx) => {
          ctx.authorize('listMembers');
          return services.team.members(ctx.em.fork(), ctx.principal);
        },
      }),
      usage: t.field({
        type: Usage,
        description: 'This billing period\'s usage (as GET /api/billing/usage; needs billing:read).',
        resolve: (_root, _args, ctx) => {
          ctx.authorize('getBillingUsage');
          return services.billing.usage(ctx.em.fork(), ctx.principal);
        },
      }),
    }),
  });

  const CreateDeploymentInput = builder.inputType('CreateDeploymentInput', {
    description: 'As POST /api/deployments\' body (the same rules).',
    fields: (t) => ({
      name: t.string({ required: true }),
      model: t.string({ required: true }),
      gpu: t.string({ required: true }),
      runtime: t.string({ description: 'vllm (the default)' }),
      replicas: t.int(),
      minReplicas: t.int(),
      maxReplicas: t.int(),
      gpusPerReplica: t.int(),
      contextLength: t.int(),
    }),
  });
  const UpdateDeploymentInput = builder.inputType('UpdateDeploymentInput', {
    description: 'As PATCH /api/deployments/{id}\'s body: any part of the configuration, or a scale (replicas and their bounds).',
    fields: (t) => ({
      model: t.string(),
      gpu: t.string(),
      replicas: t.int(),
      minReplicas: t.int(),
      maxReplicas: t.int(),
      gpusPerReplica: t.int(),
      contextLength: t.int(),
    }),
  });
  const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
    fields: (t) => ({
      name: t.string({ required: true }),
      scope: t.string({ required: true, description: 'full_access, deployments_only or read_only' }),
    }),
  });
  const DeletedDeployment = objectTypeOfView<KilnSchemaTypes, typeof DeletedDeploymentView, DeletedDeploymentBody>(builder, 'DeletedDeployment', DeletedDeploymentView);
  const RevokedApiKey = objectTypeOfView(builder, 'RevokedApiKey', RevokedApiKeyView);

  builder.mutationType({
    fields: (t) => ({
      createDeployment: t.field({
        type: Deployment,
        description: 'Create a deployment; it starts as pending (as POST /api/deployments).',
        args: { input: t.arg({ type: CreateDeploymentInput, required: true }) },
        resolve: (_root, args, ctx) => ctx.audited('createDeployment', undefined, async () => {
          ctx.authorize('createDeployment');
          const body = parseInput(CreateDeploymentRequest, { runtime: 'vllm', ...present(args.input) }, 'body');
          const created = await services.deployments.create(ctx.em.fork(), ctx.principal, body);
          return services.deployments.get(ctx.em.fork(), ctx.principal, created.id);
        }),
      }),
      updateDeployment: t.field({
        type: Deployment,
        description: 'Change part of a deployment\'s configuration or scale it (as PATCH /api/deployments/{id}).',
        args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateDeploymentInput, required: true }) },
        resolve: (_root, args, ctx) => ctx.audited('updateDeployment', String(args.id), () => {
          ctx.authorize('updateDeployment');
          const body = parseInput(UpdateDeploymentRequest, present(args.input), 'body');
          return services.deployments.update(ctx.em.fork(), ctx.principal, String(args.id), body, false);
        }),
      }),
      deleteDeployment: t.field({
        type: DeletedDeployment,
        description: 'Delete a deployment (as DELETE /api/deployments/{id}).',
        args: { id: t.arg.id({ required: true }) },
        resolve: (_root, args, ctx) => ctx.audited('deleteDeployment', String(args.id), () => {
          ctx.authorize('deleteDeployment');
          return services.deployments.remove(ctx.em.fork(), ctx.principal, String(args.id));
        }),
      }),
      createApiKey: t.field({
        type: CreatedApiKey,
        description: 'Create an API key; its value is answered this once (as POST /v1/settings/api-keys).',
        args: { input: t.arg({ type: CreateApiKeyInput, required: true }) },
        resolve: (_root, args, ctx) => ctx.audited('createApiKey', undefined, () => {
          ctx.authorize('createApiKey');
          return services.apiKeys.create(ctx.em.fork(), ctx.principal, parseInput(CreateApiKeyRequest, present(args.input), 'body'));
        }),
      }),
      revokeApiKey: t.field({
        type: RevokedApiKey,
        description: 'Revoke an API key (as DELETE /v1/settings/api-keys?id=).',
        args: { id: t.arg.id({ required: true }) },
        resolve: (_root, args, ctx) => ctx.audited('revokeApiKey', String(args.id), () => {
          ctx.authorize('revokeApiKey');
          return services.apiKeys.revoke(ctx.em.fork(), ctx.principal, String(args.id));
        }),
      }),
    }),
  });

  return builder.toSchema();
}
