// The assistant: a question answered from Kiln's documentation and from what the caller may read of their own
// organization (a deployment's failure, events and recovery options; what deployments cost), citing each thing
// it used. It reads organization data only through the caller's principal (their organization, their
// permissions), so another organization's deployment is simply not found; it never reads API keys, webhook
// secrets or sealed secrets at all, and masks anything shaped like a credential in what it stores and answers.
// With a deployment named as the model, the cited material becomes the prompt of one completion through the
// inference path (the same target checks as POST /v1/inference); without one, the material is the answer.
import type { EntityManager } from '@mikro-orm/postgresql';
import { findGpuType, GPU_TYPES, hourlyCents, type GpuType } from '../../catalog/gpu-types.ts';
import { randomString } from '../../lib/ids.ts';
import { PrometheusUnavailableError } from '../../lib/prometheus/client.ts';
import type { Principal } from '../auth/principal.ts';
import {
  DeploymentNotFoundError, ForbiddenError, InferenceRejectedError, NotFoundError, ReplicaUnavailableError, ServiceUnavailableError, UpstreamError, UpstreamTimeoutError,
} from '../core/errors.ts';
import { isAllowed, type Permission } from '../core/permissions.ts';
import type { CostService } from '../costs/service.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import type { DeploymentService } from '../deployments/service.ts';
import type { InferenceService, InferenceTarget } from '../inference/service.ts';
import { AssistantConversationSchema, AssistantMessageSchema, type Citation } from './conversation.entity.ts';
import type { DocHit, DocsIndex } from './docs.ts';
import { docCitation } from './help.ts';
import type { AssistantAnswerBody, AssistantOverviewBody, AssistantQuestionInput } from './schemas.ts';

export interface AssistantDeps {
  docs: () => DocsIndex;
  deployments: Pick<DeploymentService, 'inspect' | 'get' | 'failed'>;
  costs: Pick<CostService, 'deploymentPricing'>;
  inference: Pick<InferenceService, 'target' | 'test'>;
}

/** One thing an answer may use: its words and its citation. */
interface Material { text: string; citation?: Citation }

/** Hours in an average month (8,760 / 12): what "per month" is priced at. */
const HOURS_PER_MONTH = 730;
const MAX_DEPLOYMENTS = 5;
const MAX_EVENTS = 5;
const MESSAGES_PER_CONVERSATION = 50;
/** The completion's length when a deployment writes the answer. */
const MODEL_MAX_TOKENS = 256;

const DEPLOYMENT_ID = /\bdep_[0-9a-z]{1,64}\b/g;
const COST_WORDS = /\b(cost|costs|costing|price|prices|pricing|priced|spend|spent|spending|cheap|cheaper|expensive|bill|billed|per month|monthly|per hour|hourly)\b/i;
const FAILURE_WORDS = /\b(fail|fails|failed|failing|failure|broken|error|errors|crash|crashed|stuck|wrong)\b/i;
/**
 * What looks like a credential: Kiln's API keys and service keys, Hugging Face tokens, webhook signing secrets,
 * bearer tokens. Masked wherever the assistant writes, so neither a failure message nor a model can echo one.
 */
const CREDENTIAL = /\b(?:sk_(?:live|test)_[A-Za-z0-9]{8,}|svk_[A-Za-z0-9_]{8,}|hf_[A-Za-z0-9]{8,}|whsec_[A-Za-z0-9+/=]{8,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)\b/g;

export const redact = (text: string) => text.replace(CREDENTIAL, '[redacted]');

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/** The GPU types a question names: `L4`, `nvidia-l4`, `A100`, `h100`. */
function gpusNamed(question: string): GpuType[] {
  const lower = question.toLowerCase();
  return GPU_TYPES.filter((g) => {
    const short = g.id.replace(/^nvidia-/, '').split('-')[0]!;
    return new RegExp(`\\b(${g.id}|${short})\\b`).test(lower);
  });
}

function capabilities(principal: Principal) {
  const may = (permission: Permission) => isAllowed(permission, principal.permissions, principal.scope, principal.platformAdmin);
  return [
    { name: 'documentation', description: 'Answers from Kiln\'s documentation (the docs site\'s pages, every API route), citing the sections used.', needs: null, available: true },
    { name: 'deployment_diagnosis', description: 'Why a deployment failed or what state it is in: its status, failure reason, latest events and recovery options (name it by id, dep_..., or by name).', needs: 'deployments:read', available: may('deployments:read') },
    { name: 'costs', description: 'What your deployments cost per hour and per month from the catalog\'s GPU prices, and this month\'s measured use when Prometheus answers; a GPU type\'s catalog price.', needs: 'deployments:read', available: may('deployments:read') },
    { name: 'model', description: 'Writes the answer with one of your organization\'s running deployments as the language model (deploymentId), from the same cited material; without one, answers from retrieval alone.', needs: 'deployments:infer', available: may('deployments:infer') },
  ];
}

export function createAssistantService(deps: AssistantDeps) {
  /** A deployment the caller asked about: its state, failure, events and, when failed, what recovery offers. */
  async function diagnosis(em: EntityManager, principal: Principal, id: string): Promise<Material[]> {
    let inspected;
    try {
      inspected = await deps.deployments.inspect(em, principal, id);
    } catch (error) {
      if (error instanceof DeploymentNotFoundError) return [{ text: `I found no deployment ${id} in your organization.` }];
      // Without Temporal the workflow's view is missing; the row and its failure still answer.
      if (!(error instanceof ServiceUnavailableError)) throw error;
      const view = await deps.deployments.get(em, principal, id);
      inspected = { id, name: view.name, status: view.status, failureReason: view.failureReason, generation: 0, events: [], workflow: null };
    }
    const { name, status, failureReason, events, workflow } = inspected;
    const path = `/v1/recovery/deployments/${id}`;
    const out: Material[] = [{
      text: `Deployment ${name} (${id}) is ${status}.${failureReason ? ` Its failure reason: ${failureReason}.` : ''}`,
      citation: { type: 'deployment', id, title: `Deployment ${name}: ${status}${failureReason ? `, failed: ${failureReason}` : ''}`, ref: `/v1/deployments/${id}` },
    }];
    const latest = events.slice(0, MAX_EVENTS);
    if (latest.length) {
      out.push({
        text: `Its latest events, newest first: ${latest.map((e) => `${e.type} (generation ${e.generation}, ${e.createdAt})`).join('; ')}.`,
        citation: { type: 'event', id, title: `Events of ${name}: ${latest.map((e) => e.type).join(', ')}`, ref: path },
      });
    }
    const retrying = workflow?.pendingActivities.filter((a) => a.lastFailure) ?? [];
    if (retrying.length) {
      out.push({ text: `Its workflow is retrying: ${retrying.map((a) => `${a.activity} (attempt ${a.attempt}): ${a.lastFailure}`).join('; ')}.` });
    }
    if (status === 'failed') {
      out.push({
        text: `Recovery options: retry it (POST ${path} with {"action":"retry"}), refresh the stack's state first and retry `
          + `({"action":"refresh_and_retry"}), or delete it even if its teardown fails ({"action":"force_delete"}); `
          + `DELETE ${path} clears the failure reason once dealt with.`,
        citation: { type: 'recovery', id, title: `Recovery options for ${name}: retry, refresh_and_retry, force_delete`, ref: path },
      });
    }
    return out;
  }

  /** What a deployment costs: now and over a month at its size from the catalog, and this month's measured use if Prometheus answers. */
  async function pricing(em: EntityManager, principal: Principal, d: { id: string; name: string; gpu: string; replicas: number; gpusPerReplica: number; status: string }): Promise<Material> {
    const gpu = findGpuType(d.gpu);
    const replicas = Math.max(d.replicas, 1);
    const hourly = hourlyCents({ gpu: d.gpu, replicas, gpusPerReplica: d.gpusPerReplica });
    let text = `${d.name} (${d.id}, ${d.status}) runs on ${d.gpusPerReplica} × ${gpu?.name ?? d.gpu} per replica at ${dollars(Math.round((gpu?.hourlyPriceUsd ?? 0) * 100))} per GPU-hour: `
      + `at ${replicas} replica(s) that is ${dollars(hourly)} an hour, about ${dollars(hourly * HOURS_PER_MONTH)} a month (${HOURS_PER_MONTH} hours).`;
    try {
      const measured = await deps.costs.deploymentPricing(em, principal, d.id);
      text += ` This month so far it used ${measured.month.replicaHours} replica-hours (${dollars(measured.month.spentCents)}), projected ${dollars(measured.month.projectedCents)} by the month's end.`;
    } catch (error) {
      // Prometheus away: the catalog's price still answers.
      if (!(error instanceof PrometheusUnavailableError || error instanceof ServiceUnavailableError)) throw error;
    }
    return { text, citation: { type: 'pricing', id: d.id, title: `Pricing of ${d.name}: ${gpu?.name ?? d.gpu} at ${dollars(hourly)}/hour`, ref: `/v1/deployments/${d.id}/pricing` } };
  }

  /** The deployments a question is about: ids it names, and the caller's deployments it names by name. */
  async function deploymentsNamed(em: EntityManager, principal: Principal, question: string) {
    const ids = [...new Set(question.match(DEPLOYMENT_ID) ?? [])].slice(0, MAX_DEPLOYMENTS);
    const words = new Set(question.toLowerCase().split(/[^a-z0-9-]+/));
    const own = await em.find(DeploymentSchema, { organization: principal.organizationId, deletedAt: null }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 200 });
    const byName = own.filter((d) => words.has(d.name) && !ids.includes(d.id)).map((d) => d.id);
    return { ids: [...ids, ...byName].slice(0, MAX_DEPLOYMENTS), own };
  }

  /** Everything the answer may use, in the order it is told. */
  async function gather(em: EntityManager, principal: Principal, question: string): Promise<Material[]> {
    const material: Material[] = [];
    const mayRead = isAllowed('deployments:read', principal.permissions, principal.scope, principal.platformAdmin);
    const costs = COST_WORDS.test(question);
    const failure = FAILURE_WORDS.test(question);
    const mentionsIds = (question.match(DEPLOYMENT_ID) ?? []).length > 0;
    if (mayRead) {
      const { ids, own } = await deploymentsNamed(em, principal, question);
      const diagnosed = ids.length ? ids : failure ? (await deps.deployments.failed(em, principal)).slice(0, 3).map((d) => d.id) : [];
      for (const id of diagnosed) material.push(...await diagnosis(em, principal, id));
      if (costs) {
        const gpus = gpusNamed(question);
        const priced = ids.length ? own.filter((d) => ids.includes(d.id))
          : gpus.length ? own.filter((d) => gpus.some((g) => g.id === d.gpu)) : own;
        for (const d of priced.slice(0, MAX_DEPLOYMENTS)) material.push(await pricing(em, principal, d));
        if (!priced.length) material.push(...catalogPrices(gpus));
      }
      if (failure && !ids.length && !diagnosed.length && !costs) material.push({ text: 'None of your organization\'s deployments has failed.' });
    } else {
      if (costs) material.push(...catalogPrices(gpusNamed(question)));
      if (mentionsIds || failure) {
        material.push({ text: 'This credential may not read deployments (it lacks deployments:read), so your organization\'s data is left out and the answer comes from the documentation.' });
      }
    }
    const hits = deps.docs().search(question, material.some((m) => m.citation) ? 2 : 3);
    material.push(...hits.map(docMaterial));
    return material;
  }

  function catalogPrices(gpus: readonly GpuType[]): Material[] {
    return gpus.map((g) => {
      const cents = Math.round(g.hourlyPriceUsd * 100);
      return {
        text: `The catalog price of ${g.name} (${g.id}) is ${dollars(cents)} per GPU-hour: about ${dollars(cents * HOURS_PER_MONTH)} a month per GPU running all month (${HOURS_PER_MONTH} hours).`,
        citation: { type: 'pricing', id: g.id, title: `Catalog price of ${g.name}: ${dollars(cents)} per GPU-hour`, ref: '/v1/gpu-types' },
      };
    });
  }

  /** Asks the deployment to answer from the material alone; its completion is the answer. */
  async function modelAnswer(target: InferenceTarget, question: string, material: readonly Material[], signal: AbortSignal): Promise<string> {
    const numbered = material.map((m, i) => `[${i + 1}] ${m.text}`).join('\n');
    const prompt = `You are Kiln's assistant. Answer the question using only the numbered material below, and name the numbers you used. `
      + `If the material does not answer it, say so.\n\nMaterial:\n${numbered.slice(0, 6000)}\n\nQuestion: ${question}\nAnswer:`;
    const { result } = await deps.inference.test(target, { deployment: target.deploymentId, prompt, maxTokens: MODEL_MAX_TOKENS }, signal);
    return result.output.trim();
  }

  async function conversationOf(em: EntityManager, principal: Principal, id: string | undefined, question: string) {
    if (id === undefined) {
      return em.create(AssistantConversationSchema, {
        id: `cnv_${randomString(20)}`, user: principal.userId, organization: principal.organizationId,
        title: redact(question).slice(0, 120), updatedAt: new Date(),
      });
    }
    // Another user's conversation, in this organization or any other, is not found.
    const found = await em.findOne(AssistantConversationSchema, { id, user: principal.userId, organization: principal.organizationId });
    if (!found) throw new NotFoundError(`Conversation ${id} not found`);
    return found;
  }

  return {
    async ask(em: EntityManager, principal: Principal, input: AssistantQuestionInput, signal: AbortSignal): Promise<AssistantAnswerBody> {
      let target: InferenceTarget | undefined;
      if (input.deploymentId !== undefined) {
        if (!isAllowed('deployments:infer', principal.permissions, principal.scope, principal.platformAdmin)) {
          throw new ForbiddenError('Using a deployment as the assistant\'s model needs the deployments:infer permission');
        }
        // 404 for none of the organization's, 409 unless it serves: as POST /v1/inference answers.
        target = await deps.inference.target(em, principal, input.deploymentId);
      }
      const conversation = await conversationOf(em, principal, input.conversationId, input.question);
      // Masked before anything sees it: the model's prompt, the answer, the citations, the stored turn.
      const material = (await gather(em, principal, input.question)).map((m) => ({
        text: redact(m.text), ...(m.citation ? { citation: { ...m.citation, title: redact(m.citation.title) } } : {}),
      }));
      const citations = material.flatMap((m) => (m.citation ? [m.citation] : []));
      const retrieval = material.length
        ? material.map((m) => m.text).join('\n\n')
        : 'I found nothing on that in Kiln\'s documentation or in what you may read of your organization.';

      let answer = retrieval;
      let model: AssistantAnswerBody['model'] = null;
      if (target) {
        model = { deploymentId: target.deploymentId, name: target.name, error: null };
        try {
          answer = (await modelAnswer(target, input.question, material, signal)) || retrieval;
        } catch (error) {
          // The model's server failing leaves retrieval's answer, and says why.
          if (!(error instanceof UpstreamError || error instanceof UpstreamTimeoutError || error instanceof ReplicaUnavailableError
            || error instanceof InferenceRejectedError || error instanceof ServiceUnavailableError)) throw error;
          model.error = error.message;
        }
      }
      answer = redact(answer);
      const now = new Date();
      em.create(AssistantMessageSchema, {
        id: `amg_${randomString(20)}`, conversation, organization: principal.organizationId, role: 'user',
        content: redact(input.question), citations: [], modelDeploymentId: null, createdAt: now,
      });
      const reply = em.create(AssistantMessageSchema, {
        id: `amg_${randomString(20)}`, conversation, organization: principal.organizationId, role: 'assistant',
        content: answer, citations, modelDeploymentId: model && !model.error ? model.deploymentId : null, createdAt: new Date(now.getTime() + 1),
      });
      conversation.updatedAt = reply.createdAt;
      await em.flush();
      return {
        conversationId: conversation.id, messageId: reply.id, question: redact(input.question), answer,
        mode: model && !model.error ? 'model' : 'retrieval', model, citations, createdAt: reply.createdAt.toISOString(),
      };
    },

    /** What the assistant can do for this credential, and the caller's own newest conversations with their last turns. */
    async overview(em: EntityManager, principal: Principal, limit: number): Promise<AssistantOverviewBody> {
      const conversations = await em.find(AssistantConversationSchema, { user: principal.userId, organization: principal.organizationId },
        { orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }], limit });
      const messages = conversations.length
        ? await em.find(AssistantMessageSchema, { conversation: { $in: conversations.map((c) => c.id) } }, { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] })
        : [];
      return {
        capabilities: capabilities(principal),
        conversations: conversations.map((c) => ({
          id: c.id, title: c.title, createdAt: c.createdAt.toISOString(), updatedAt: c.updatedAt.toISOString(),
          messages: messages.filter((m) => m.conversation.id === c.id).slice(-MESSAGES_PER_CONVERSATION).map((m) => ({
            id: m.id, role: m.role, content: m.content, citations: m.citations, modelDeploymentId: m.modelDeploymentId ?? null, createdAt: m.createdAt.toISOString(),
          })),
        })),
      };
    },
  };
}

/** A documentation section as material: its title and the words that matched. */
function docMaterial(hit: DocHit): Material {
  return { text: `From "${hit.title}" (${hit.id}): ${hit.snippet}`, citation: docCitation(hit) };
}

export type AssistantService = ReturnType<typeof createAssistantService>;
