// Deployment templates: named configurations in immutable, numbered versions, private to an organization or
// public; catalog presets beside them; stars per user; deploying one through the deployments service's own
// create; and the subscriptions whose new versions become the subscribers' notifications.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { findGpuType } from '../../catalog/gpu-types.ts';
import { randomString } from '../../lib/ids.ts';
import type { Principal } from '../auth/principal.ts';
import { ConflictError, DeploymentNotFoundError, ForbiddenError, NotFoundError, ValidationError, invalidField } from '../core/errors.ts';
import type { CursorCodec } from '../core/pagination.ts';
import { bypassingRowLevelSecurity } from '../core/row-level-security.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import { resolveScaling } from '../deployments/rules.ts';
import type { DeploymentService } from '../deployments/service.ts';
import { hourlyCents } from '../../catalog/gpu-types.ts';
import { assertLoadableModel } from '../models/model-source.ts';
import type { UserNotificationService } from '../notifications/user-notifications.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { compareText, findPreset, PRESET_PREFIX, PRESETS, type Preset } from './presets.ts';
import { TemplateSchema, type Template, type Visibility } from './template.entity.ts';
import { TemplateStarSchema } from './template-star.entity.ts';
import { TemplateSubscriptionSchema, type SubscriptionReason } from './template-subscription.entity.ts';
import { TemplateVersionSchema, type TemplateVersion } from './template-version.entity.ts';
import type {
  CreateTemplateInput, DeployTemplateInput, ListTemplatesInput, ListVersionsInput, NewTemplateVersionInput, OutdatedDeploymentBody, ShareAsTemplateInput,
  TemplateConfigurationBody, TemplateConfigurationChangeInput, TemplateConfigurationInput, TemplateDeployPreviewBody, TemplateUpdatesBody, TemplateVersionViewBody,
  TemplateViewBody, UpdateTemplateUpdatesInput,
} from './schemas.ts';

const LIST_ORDERING = 'templates:starred,name,id';
const VERSION_ORDERING = 'template-versions:-version';
/** The configuration's fields, in the order changes are reported. */
const CONFIGURATION_FIELDS = ['model', 'gpu', 'gpusPerReplica', 'replicas', 'minReplicas', 'maxReplicas', 'contextLength', 'dtype', 'vllmArgs'] as const;

export interface ConfigurationChange { field: string; from: unknown; to: unknown }

export interface TemplateServiceDeps {
  cursors: CursorCodec;
  deployments: Pick<DeploymentService, 'create' | 'serving'>;
  userNotifications: UserNotificationService;
}

/** The template table's columns the list reads, and the tables it joins, as Kysely sees them. */
interface Tables {
  template: { id: string; organization_id: string; name: string; description: string; visibility: Visibility; latest_version: number; created_at: Date | string; updated_at: Date | string };
  template_version: {
    template_id: string; version: number; model: string; gpu: string; gpus_per_replica: number; replicas: number; min_replicas: number; max_replicas: number;
    context_length: number | null; dtype: string; vllm_args: string[];
  };
  template_star: { template_id: string; user_id: string; id: string };
}

/** One list entry before stars are counted: a preset or a row, with its position in the list's order. */
interface Entry { rank: 0 | 1; name: string; id: string; view: Omit<TemplateViewBody, 'stars'> }

const newTemplateId = () => `tpl_${randomString(20)}`;
const newVersionId = () => `tpv_${randomString(20)}`;

export function createTemplateService(deps: TemplateServiceDeps) {
  /** The whole configuration a new template's first version stores: the deployment rules' defaults and sizing. */
  async function settle(em: EntityManager, principal: Principal, input: TemplateConfigurationInput): Promise<TemplateConfigurationBody> {
    assertLoadableModel(input.model);
    const scaling = resolveScaling(input, undefined);
    return { model: input.model, gpu: input.gpu, ...scaling, ...await deps.deployments.serving(em, principal, input.model, input.gpu, input) };
  }

  /** A new version from the latest and the fields given, as a deployment's update settles them: a new model or GPU type is sized afresh unless sized here. */
  async function settleChange(em: EntityManager, principal: Principal, latest: TemplateConfigurationBody, change: TemplateConfigurationChangeInput): Promise<TemplateConfigurationBody> {
    const model = change.model ?? latest.model;
    const gpu = change.gpu ?? latest.gpu;
    if (change.model !== undefined) assertLoadableModel(model);
    const resized = model !== latest.model || gpu !== latest.gpu;
    const scaling = resolveScaling(change, latest);
    const serving = await deps.deployments.serving(em, principal, model, gpu, {
      gpusPerReplica: change.gpusPerReplica ?? (resized ? undefined : latest.gpusPerReplica),
      contextLength: change.contextLength ?? (resized ? undefined : latest.contextLength ?? undefined),
      dtype: change.dtype ?? latest.dtype,
      vllmArgs: change.vllmArgs ?? latest.vllmArgs,
    });
    return { model, gpu, ...scaling, ...serving };
  }

  /** A template the caller may see (its organization's, or public), or 404. */
  async function visible(em: EntityManager, principal: Principal, id: string, lock = false): Promise<Template> {
    const template = await em.findOne(TemplateSchema, { id, $or: [{ organization: principal.organizationId }, { visibility: 'public' }] },
      lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {});
    if (!template) throw notFound(id);
    return template;
  }

  /** A template the caller's organization owns: 404 when it may not see it, 403 when it is someone else's public one. */
  async function owned(em: EntityManager, principal: Principal, id: string, lock = false): Promise<Template> {
    if (findPreset(id)) throw new ForbiddenError(`Template ${id} is a catalog preset: it cannot be changed`);
    const template = await visible(em, principal, id, lock);
    if (template.organization.id !== principal.organizationId) throw new ForbiddenError(`Template ${id} belongs to another organization: only its owner may change it`);
    return template;
  }

  async function version(em: EntityManager, template: Template, number?: number): Promise<TemplateVersion> {
    const wanted = number ?? template.latestVersion;
    const found = await em.findOne(TemplateVersionSchema, { template: template.id, version: wanted });
    if (!found) throw invalidField('version', `template ${template.id} has versions 1 to ${template.latestVersion}`);
    return found;
  }

  /** What a template's version deploys, preset or row: its name and configuration. */
  async function deployable(em: EntityManager, principal: Principal, id: string, number?: number) {
    const preset = findPreset(id);
    if (preset) {
      if (number !== undefined && number !== 1) throw invalidField('version', `catalog preset ${id} has one version, 1`);
      return { id, name: preset.name, version: 1, configuration: preset.configuration, template: undefined };
    }
    const template = await visible(em, principal, id);
    const row = await version(em, template, number);
    return { id, name: template.name, version: row.version, configuration: configurationOf(row), template };
  }

  async function starCounts(em: EntityManager, ids: readonly string[]): Promise<Map<string, number>> {
    if (!ids.length) return new Map();
    const rows = await em.getKysely<Tables>().selectFrom('template_star').select(['template_id', sql<string>`count(*)`.as('n')])
      .where('template_id', 'in', [...ids]).groupBy('template_id').execute();
    return new Map(rows.map((row) => [row.template_id, Number(row.n)]));
  }

  async function starView(em: EntityManager, principal: Principal, id: string) {
    const starred = await em.count(TemplateStarSchema, { templateId: id, user: principal.userId });
    return { templateId: id, starred: starred > 0, stars: (await starCounts(em, [id])).get(id) ?? 0 };
  }

  /** Subscribes the caller (in its organization) unless subscribed already; presets never change, so they take none. */
  async function subscribe(em: EntityManager, principal: Principal, templateId: string, reason: SubscriptionReason): Promise<void> {
    if (templateId.startsWith(PRESET_PREFIX)) return;
    await em.getKysely<{ template_subscription: { id: string; created_at: Date; user_id: string; organization_id: string; template_id: string; reason: string } }>()
      .insertInto('template_subscription')
      .values({ id: `tsb_${randomString(20)}`, created_at: new Date(), user_id: principal.userId, organization_id: principal.organizationId, template_id: templateId, reason })
      .onConflict((oc) => oc.columns(['user_id', 'organization_id', 'template_id']).doNothing())
      .execute();
  }

  /**
   * A new version, under the template's row lock, then its notifications: one for every subscriber but its
   * author. Subscribers of a public template act in other organizations, whose rows this request's
   * organization may not write, so the notifications are written outside row-level security, for this
   * template's subscribers alone.
   */
  async function addVersion(em: EntityManager, principal: Principal, templateId: string, build: (latest: TemplateConfigurationBody) => Promise<TemplateConfigurationBody>, notes: string | undefined) {
    // Settled before the lock (sizing may ask the Hub), then numbered under it: a version added meanwhile is a conflict, not overwritten.
    const previous = await version(em, await owned(em, principal, templateId));
    const configuration = await build(configurationOf(previous));
    const { template, created } = await em.transactional(async (tx) => {
      const template = await owned(tx, principal, templateId, true);
      if (template.latestVersion !== previous.version) {
        throw new ConflictError(`Template ${templateId} gained version ${template.latestVersion} meanwhile: send the change again`, { field: 'id' });
      }
      template.latestVersion += 1;
      const created = tx.create(TemplateVersionSchema, {
        id: newVersionId(), template, organization: template.organization, version: template.latestVersion, ...configuration, notes: notes ?? null, createdBy: principal.userId,
      });
      return { template, created };
    });
    const payload = {
      templateId: template.id, templateName: template.name, version: created.version, previousVersion: previous.version,
      changes: configurationChanges(configurationOf(previous), configurationOf(created)),
    };
    await bypassingRowLevelSecurity(async () => {
      const fork = em.fork();
      const subscribers = await fork.find(TemplateSubscriptionSchema, { template: template.id, user: { $ne: principal.userId } });
      await deps.userNotifications.notify(fork, subscribers.map((s) => ({ userId: s.user.id, organizationId: s.organization.id })), 'template.updated', payload);
      await fork.flush();
    });
    return versionView(template.id, created);
  }

  /** The caller's subscriptions in this organization and the template updates it has not marked seen. */
  async function updates(em: EntityManager, principal: Principal): Promise<TemplateUpdatesBody> {
    const subscriptions = await em.find(TemplateSubscriptionSchema, { user: principal.userId, organization: principal.organizationId },
      { populate: ['template'], orderBy: { createdAt: 'asc', id: 'asc' } });
    const unseen = await deps.userNotifications.unread(em, recipient(principal), 'template.updated');
    return {
      subscriptions: subscriptions.map((s) => ({
        templateId: s.template.id, templateName: s.template.getEntity().name, latestVersion: s.template.getEntity().latestVersion, reason: s.reason, subscribedAt: s.createdAt.toISOString(),
      })),
      unseen: unseen.map((n) => ({ id: n.id, ...n.payload, createdAt: n.createdAt.toISOString() })),
    };
  }

  async function create(em: EntityManager, principal: Principal, input: CreateTemplateInput): Promise<TemplateViewBody> {
    const configuration = await settle(em, principal, input.configuration);
    if (await em.count(TemplateSchema, { organization: principal.organizationId, name: input.name })) throw nameTaken(input.name);
    const organization = em.getReference(OrganizationSchema, principal.organizationId);
    const template = em.create(TemplateSchema, {
      id: newTemplateId(), organization, name: input.name, description: input.description, visibility: input.visibility, latestVersion: 1, createdBy: principal.userId,
    });
    em.create(TemplateVersionSchema, { id: newVersionId(), template, organization, version: 1, ...configuration, notes: input.notes ?? null, createdBy: principal.userId });
    await em.flush().catch((error: unknown) => {
      if (error instanceof Error && error.name === 'UniqueConstraintViolationException') throw nameTaken(input.name);
      throw error;
    });
    return { ...rowView(template, configuration, principal), starred: false, stars: 0 };
  }

  return {
    /** Presets, public templates and the organization's own: the caller's starred ones first, then by name; cursor pages. */
    async list(em: EntityManager, principal: Principal, query: ListTemplatesInput) {
      const after = query.cursor ? JSON.parse(deps.cursors.decode(query.cursor, LIST_ORDERING)) as [0 | 1, string, string] : undefined;
      const model = query.model?.toLowerCase();
      let select = em.getKysely<Tables>().selectFrom('template as t')
        .innerJoin('template_version as v', (join) => join.onRef('v.template_id', '=', 't.id').onRef('v.version', '=', 't.latest_version'))
        .leftJoin('template_star as s', (join) => join.onRef('s.template_id', '=', 't.id').on('s.user_id', '=', principal.userId))
        .select(['t.id', 't.organization_id', 't.name', 't.description', 't.visibility', 't.latest_version', 't.created_at', 't.updated_at',
          'v.model', 'v.gpu', 'v.gpus_per_replica', 'v.replicas', 'v.min_replicas', 'v.max_replicas', 'v.context_length', 'v.dtype', 'v.vllm_args',
          sql<0 | 1>`case when s.id is null then 1 else 0 end`.as('rank')])
        .where((eb) => eb.or([eb('t.organization_id', '=', principal.organizationId), eb('t.visibility', '=', 'public')]));
      if (model) select = select.where(sql<boolean>`lower(v.model) = ${model}`);
      // Names compare in code-point order ("C"), as the presets merged with these rows are ordered.
      if (after) select = select.where(sql<boolean>`(case when s.id is null then 1 else 0 end, t.name collate "C", t.id) > (${after[0]}, ${after[1]}, ${after[2]})`);
      const rows = await select.orderBy(sql`case when s.id is null then 1 else 0 end`).orderBy(sql`t.name collate "C"`).orderBy('t.id').limit(query.limit + 1).execute();

      const starred = new Set((await em.find(TemplateStarSchema, { user: principal.userId, templateId: { $like: `${PRESET_PREFIX}%` } })).map((s) => s.templateId));
      const entries: Entry[] = rows.map((row) => ({
        rank: Number(row.rank) as 0 | 1, name: row.name, id: row.id,
        view: {
          id: row.id, name: row.name, description: row.description, visibility: row.visibility, source: 'organization', owned: row.organization_id === principal.organizationId,
          latestVersion: row.latest_version, starred: Number(row.rank) === 0,
          configuration: {
            model: row.model, gpu: row.gpu, gpusPerReplica: row.gpus_per_replica, replicas: row.replicas, minReplicas: row.min_replicas, maxReplicas: row.max_replicas,
            contextLength: row.context_length, dtype: row.dtype as TemplateConfigurationBody['dtype'], vllmArgs: row.vllm_args,
          },
          createdAt: new Date(row.created_at).toISOString(), updatedAt: new Date(row.updated_at).toISOString(),
        },
      }));
      for (const preset of PRESETS) {
        if (model && preset.configuration.model.toLowerCase() !== model) continue;
        const entry: Entry = { rank: starred.has(preset.id) ? 0 : 1, name: preset.name, id: preset.id, view: presetView(preset, starred.has(preset.id)) };
        if (!after || comparePosition(entry, after) > 0) entries.push(entry);
      }
      entries.sort((a, b) => comparePosition(a, [b.rank, b.name, b.id]));
      const page = deps.cursors.page(entries.slice(0, query.limit + 1), query.limit, LIST_ORDERING, (last) => [last.rank, last.name, last.id]);
      const counts = await starCounts(em, page.items.map((e) => e.id));
      return { ...page, items: page.items.map((e) => ({ ...e.view, stars: counts.get(e.id) ?? 0 })) };
    },

    create,

    async versions(em: EntityManager, principal: Principal, id: string, query: ListVersionsInput) {
      const preset = findPreset(id);
      if (preset) {
        const items = query.cursor ? [] : [{ templateId: id, version: 1, configuration: preset.configuration, notes: null, createdAt: null }];
        return { items, hasMore: false, nextCursor: null };
      }
      const template = await visible(em, principal, id);
      const before = query.cursor ? Number(JSON.parse(deps.cursors.decode(query.cursor, VERSION_ORDERING))) : undefined;
      const rows = await em.find(TemplateVersionSchema, { template: template.id, ...(before !== undefined ? { version: { $lt: before } } : {}) },
        { orderBy: { version: 'desc' }, limit: query.limit + 1 });
      return deps.cursors.page(rows.map((row) => versionView(id, row)), query.limit, VERSION_ORDERING, (last) => last.version);
    },

    async starStatus(em: EntityManager, principal: Principal, id: string) {
      if (!findPreset(id)) await visible(em, principal, id);
      return starView(em, principal, id);
    },

    /** Stars (idempotently) and subscribes the caller to its updates. */
    async star(em: EntityManager, principal: Principal, id: string) {
      if (!findPreset(id)) await visible(em, principal, id);
      await em.getKysely<{ template_star: { id: string; created_at: Date; template_id: string; user_id: string } }>().insertInto('template_star')
        .values({ id: `tst_${randomString(20)}`, created_at: new Date(), template_id: id, user_id: principal.userId })
        .onConflict((oc) => oc.columns(['template_id', 'user_id']).doNothing()).execute();
      await subscribe(em, principal, id, 'starred');
      return starView(em, principal, id);
    },

    /** Takes the star back; the subscription stays until PATCH /v1/notifications/template-updates ends it. */
    async unstar(em: EntityManager, principal: Principal, id: string) {
      if (!findPreset(id)) await visible(em, principal, id);
      await em.nativeDelete(TemplateStarSchema, { templateId: id, user: principal.userId });
      return starView(em, principal, id);
    },

    /**
     * Deletes a template its organization owns, with its versions, stars and subscriptions, in one
     * transaction; catalog presets and another organization's public template are 403 (as a new version of
     * them is), another's private one 404. Deployments made from it are left as they are: each stores its
     * whole configuration and keeps running, and its templateId stays as a record of where it came from
     * (outdated-templates leaves out a template that is gone; an upgrade to a version of it is 422). The
     * notifications of its past versions stay in their users' inboxes, as notices of other deleted things do.
     */
    async remove(em: EntityManager, principal: Principal, id: string) {
      await owned(em, principal, id);
      // Subscribers and stars of a public template belong to other organizations, whose rows this request's
      // organization may not delete: the transaction runs outside row-level security, on this template's
      // rows alone, and finds the template again under its row lock (a version added meanwhile goes with it).
      await bypassingRowLevelSecurity(() => em.fork().transactional(async (tx) => {
        const template = await tx.findOne(TemplateSchema, { id, organization: principal.organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!template) throw notFound(id);
        await tx.nativeDelete(TemplateSubscriptionSchema, { template: id });
        await tx.nativeDelete(TemplateStarSchema, { templateId: id });
        await tx.nativeDelete(TemplateVersionSchema, { template: id });
        await tx.nativeDelete(TemplateSchema, { id });
      }));
      return { id, deleted: true as const };
    },

    async newVersion(em: EntityManager, principal: Principal, id: string, input: NewTemplateVersionInput) {
      return addVersion(em, principal, id, (latest) => settleChange(em, principal, latest, input.configuration), input.notes);
    },

    async preview(em: EntityManager, principal: Principal, id: string, number: number | undefined): Promise<TemplateDeployPreviewBody> {
      const { name, version: at, configuration: c } = await deployable(em, principal, id, number);
      const gpu = findGpuType(c.gpu)!;
      const organization = await em.findOneOrFail(OrganizationSchema, principal.organizationId);
      const requiredCents = hourlyCents(c);
      const usd = (replicas: number) => Math.round(gpu.hourlyPriceUsd * c.gpusPerReplica * replicas * 100) / 100;
      return {
        templateId: id, templateName: name, version: at, deployment: { ...c, runtime: 'vllm' },
        gpuType: { id: gpu.id, name: gpu.name, hourlyPriceUsd: gpu.hourlyPriceUsd },
        gpus: c.replicas * c.gpusPerReplica, hourlyCostUsd: usd(c.replicas), maxHourlyCostUsd: usd(c.maxReplicas),
        credits: { requiredCents, availableCents: organization.creditsCents, sufficient: organization.creditsCents >= requiredCents },
      };
    },

    /** A deployment of the version, made by the deployments service's create (its rules, credits and errors), remembering the version; the deployer is subscribed. */
    async deploy(em: EntityManager, principal: Principal, id: string, input: DeployTemplateInput) {
      const { version: at, configuration } = await deployable(em, principal, id, input.version);
      const created = await deps.deployments.create(em, principal, { name: input.name, runtime: 'vllm', ...configuration, contextLength: configuration.contextLength ?? undefined },
        { templateId: id, templateVersion: at });
      await subscribe(em, principal, id, 'deployed');
      return { ...created, templateId: id, templateVersion: at };
    },

    /** A deployment's configuration as a new template, or as a new version of one the organization owns; the deployment then follows it. */
    async shareDeployment(em: EntityManager, principal: Principal, deploymentId: string, input: ShareAsTemplateInput): Promise<TemplateVersionViewBody & { templateName: string }> {
      const deployment = await em.findOne(DeploymentSchema, { id: deploymentId, organization: principal.organizationId, deletedAt: null });
      if (!deployment) throw new DeploymentNotFoundError(`Deployment ${deploymentId} not found`);
      const configuration: TemplateConfigurationBody = {
        model: deployment.model, gpu: deployment.gpu, gpusPerReplica: deployment.gpusPerReplica, replicas: deployment.replicas, minReplicas: deployment.minReplicas,
        maxReplicas: deployment.maxReplicas, contextLength: deployment.contextLength ?? null, dtype: deployment.dtype, vllmArgs: deployment.vllmArgs,
      };
      let shared: TemplateVersionViewBody & { templateName: string };
      if (input.templateId !== undefined) {
        for (const field of ['name', 'description', 'visibility'] as const) {
          if (input[field] !== undefined) throw invalidField(field, 'only for a new template: leave it out with templateId');
        }
        const added = await addVersion(em, principal, input.templateId, async () => configuration, input.notes);
        shared = { ...added, templateName: (await visible(em, principal, input.templateId)).name };
      } else {
        if (input.name === undefined) throw invalidField('name', 'required without templateId');
        const template = await create(em, principal, {
          name: input.name, description: input.description ?? '', visibility: input.visibility ?? 'private', configuration: { ...configuration, contextLength: configuration.contextLength ?? undefined }, notes: input.notes,
        });
        shared = { templateId: template.id, templateName: template.name, version: 1, configuration, notes: input.notes ?? null, createdAt: template.createdAt };
      }
      deployment.templateId = shared.templateId;
      deployment.templateVersion = shared.version;
      await em.flush();
      await subscribe(em, principal, shared.templateId, 'deployed');
      return shared;
    },

    /** The organization's deployments whose template has a newer version, with what the latest changes from theirs. */
    async outdated(em: EntityManager, principal: Principal): Promise<OutdatedDeploymentBody[]> {
      const deployments = await em.find(DeploymentSchema, { organization: principal.organizationId, deletedAt: null, templateId: { $ne: null } },
        { orderBy: { createdAt: 'asc', id: 'asc' } });
      if (!deployments.length) return [];
      const templates = new Map((await em.find(TemplateSchema, { id: { $in: [...new Set(deployments.map((d) => d.templateId!))] } })).map((t) => [t.id, t]));
      const behind = deployments.filter((d) => !d.templateId!.startsWith(PRESET_PREFIX) && (templates.get(d.templateId!)?.latestVersion ?? 0) > (d.templateVersion ?? 0));
      if (!behind.length) return [];
      const wanted = behind.flatMap((d) => [{ template: d.templateId!, version: d.templateVersion! }, { template: d.templateId!, version: templates.get(d.templateId!)!.latestVersion }]);
      const versions = new Map((await em.find(TemplateVersionSchema, { $or: wanted })).map((v) => [`${v.template.id}@${v.version}`, configurationOf(v)]));
      return behind.flatMap((d) => {
        const template = templates.get(d.templateId!)!;
        const from = versions.get(`${template.id}@${d.templateVersion}`);
        const to = versions.get(`${template.id}@${template.latestVersion}`)!;
        if (!from) return [];
        return [{
          deploymentId: d.id, deploymentName: d.name, templateId: template.id, templateName: template.name,
          currentVersion: d.templateVersion!, latestVersion: template.latestVersion, changes: configurationChanges(from, to),
        }];
      });
    },

    updates,

    /** Checks every id first, so a request refused (422) changes nothing. */
    async changeUpdates(em: EntityManager, principal: Principal, input: UpdateTemplateUpdatesInput): Promise<TemplateUpdatesBody> {
      for (const [i, id] of (input.subscribe ?? []).entries()) {
        if (findPreset(id)) throw invalidField(`subscribe.${i}`, 'catalog presets never change: there is nothing to hear of');
        if (!await em.count(TemplateSchema, { id, $or: [{ organization: principal.organizationId }, { visibility: 'public' }] })) throw invalidField(`subscribe.${i}`, 'no such template');
      }
      if (input.seen !== undefined) {
        const unknown = await deps.userNotifications.markRead(em, recipient(principal), 'template.updated', input.seen);
        if (unknown.length) {
          const fields = unknown.map((id) => ({ field: `seen.${(input.seen as string[]).indexOf(id)}`, message: 'no such template update of yours' }));
          throw new ValidationError(`Invalid field ${fields[0]!.field}: no such template update of yours`, { fields });
        }
      }
      for (const id of input.subscribe ?? []) await subscribe(em, principal, id, 'subscribed');
      if (input.unsubscribe?.length) {
        await em.nativeDelete(TemplateSubscriptionSchema, { user: principal.userId, organization: principal.organizationId, template: { $in: input.unsubscribe } });
      }
      return updates(em, principal);
    },

  };
}

export function configurationOf(v: Pick<TemplateVersion, (typeof CONFIGURATION_FIELDS)[number]>): TemplateConfigurationBody {
  return {
    model: v.model, gpu: v.gpu, gpusPerReplica: v.gpusPerReplica, replicas: v.replicas, minReplicas: v.minReplicas, maxReplicas: v.maxReplicas,
    contextLength: v.contextLength ?? null, dtype: v.dtype as TemplateConfigurationBody['dtype'], vllmArgs: v.vllmArgs,
  };
}

/** The fields whose values differ, each with both values. */
export function configurationChanges(from: TemplateConfigurationBody, to: TemplateConfigurationBody): ConfigurationChange[] {
  return CONFIGURATION_FIELDS.filter((field) => JSON.stringify(from[field]) !== JSON.stringify(to[field]))
    .map((field) => ({ field, from: from[field], to: to[field] }));
}

function comparePosition(entry: Entry, position: readonly [number, string, string]): number {
  return entry.rank - position[0] || compareText(entry.name, position[1]) || compareText(entry.id, position[2]);
}

function rowView(t: Template, configuration: TemplateConfigurationBody, principal: Principal): Omit<TemplateViewBody, 'starred' | 'stars'> {
  return {
    id: t.id, name: t.name, description: t.description, visibility: t.visibility, source: 'organization', owned: t.organization.id === principal.organizationId,
    latestVersion: t.latestVersion, configuration, createdAt: t.createdAt.toISOString(), updatedAt: t.updatedAt.toISOString(),
  };
}

function presetView(p: Preset, starred: boolean): Omit<TemplateViewBody, 'stars'> {
  return {
    id: p.id, name: p.name, description: p.description, visibility: 'public', source: 'catalog', owned: false, latestVersion: 1,
    configuration: p.configuration, starred, createdAt: null, updatedAt: null,
  };
}

function versionView(templateId: string, v: TemplateVersion): TemplateVersionViewBody {
  return { templateId, version: v.version, configuration: configurationOf(v), notes: v.notes ?? null, createdAt: v.createdAt.toISOString() };
}

const recipient = (principal: Principal) => ({ userId: principal.userId, organizationId: principal.organizationId });

function notFound(id: string): NotFoundError {
  return new NotFoundError(`Template ${id} not found`);
}

function nameTaken(name: string): ConflictError {
  return new ConflictError(`A template named ${name} already exists in this organization`, { field: 'name' });
}

export type TemplateService = ReturnType<typeof createTemplateService>;
