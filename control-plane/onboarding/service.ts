// Onboarding: each step's state read from the organization's records (steps.ts), what the caller chose
// about it (dismissed, skipped: the only things stored, per user and organization, since hiding or skipping
// is one person's choice while the steps are the organization's work), and where the organization can run
// deployments: the shared clusters and its own, which it connects here through the clusters service.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomString } from '../../lib/ids.ts';
import { parseKubeconfig } from '../../lib/kubernetes/api.ts';
import { assertPublicUrl } from '../../lib/network-guard.ts';
import type { Principal } from '../auth/principal.ts';
import { circuitProviderOf, type GpuClusterRecord } from '../clusters/gpu-cluster.entity.ts';
import type { ClusterService } from '../clusters/service.ts';
import { invalidField } from '../core/errors.ts';
import type { CircuitService } from '../recovery/circuits.ts';
import { OnboardingStateSchema, type OnboardingState } from './onboarding-state.entity.ts';
import type { CreateProviderInput, OnboardingProgressBody, OnboardingStepBody, ProviderBody, SkipStepInput } from './schemas.ts';
import { ONBOARDING_STEPS, STEP_GUIDE, stepsDoneAt, type OnboardingStepId } from './steps.ts';

export interface OnboardingServiceDeps {
  clusters: Pick<ClusterService, 'available' | 'create'>;
  circuits: Pick<CircuitService, 'list'>;
  /** Outside production, an organization's cluster may be on a private address (the local test cluster). */
  allowPrivateClusters: boolean;
}

const SERVING: readonly string[] = ['ready', 'scaling'];

export function createOnboardingService(deps: OnboardingServiceDeps) {
  const stateOf = (em: EntityManager, principal: Principal) =>
    em.findOne(OnboardingStateSchema, { user: principal.userId, organization: principal.organizationId });

  /** Changes the caller's row under its lock (made first if missing), so concurrent skips all land. */
  async function change(em: EntityManager, principal: Principal, apply: (state: OnboardingState) => void): Promise<void> {
    await em.transactional(async (tx) => {
      await tx.upsert(OnboardingStateSchema, {
        id: `onb_${randomString(20)}`, user: principal.userId, organization: principal.organizationId, skipped: [], createdAt: new Date(), updatedAt: new Date(),
      }, { onConflictAction: 'ignore', onConflictFields: ['user', 'organization'], disableIdentityMap: true });
      const state = await tx.findOneOrFail(OnboardingStateSchema, { user: principal.userId, organization: principal.organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      apply(state);
      await tx.flush();
    });
  }

  async function steps(em: EntityManager, principal: Principal): Promise<OnboardingStepBody[]> {
    const [doneAt, state] = await Promise.all([stepsDoneAt(em, principal.organizationId, principal.userId), stateOf(em, principal)]);
    const skipped = new Set(state?.skipped ?? []);
    return ONBOARDING_STEPS.map((id) => {
      const done = doneAt[id] !== null;
      const skip = !done && skipped.has(id);
      return { id, ...STEP_GUIDE[id], status: done ? 'done' : skip ? 'skipped' : 'todo', done, doneAt: doneAt[id]?.toISOString() ?? null, skipped: skip };
    });
  }

  async function progress(em: EntityManager, principal: Principal): Promise<OnboardingProgressBody> {
    const [all, state] = await Promise.all([steps(em, principal), stateOf(em, principal)]);
    const done = all.filter((s) => s.done).length;
    const skipped = all.filter((s) => s.skipped).length;
    return {
      total: all.length, done, skipped, percent: Math.floor(((done + skipped) * 100) / all.length), complete: done + skipped === all.length,
      nextStep: all.find((s) => s.status === 'todo')?.id ?? null,
      dismissed: !!state?.dismissedAt, dismissedAt: state?.dismissedAt?.toISOString() ?? null,
    };
  }

  function providerView(cluster: GpuClusterRecord, circuits: Map<string, ProviderBody['gpus'][number]['circuit']>): ProviderBody {
    const own = !!cluster.organization;
    const gpus = cluster.gpus.map((g) => ({ gpuType: g.gpuType, count: g.count, circuit: circuits.get(`${circuitProviderOf(cluster)}/${g.gpuType}`) ?? 'closed' }));
    return {
      id: cluster.id, name: cluster.name, kind: own ? 'own' : 'shared', provider: cluster.provider, status: cluster.status,
      usable: SERVING.includes(cluster.status) && !cluster.deleteRequested && cluster.gpus.some((g) => g.count > 0),
      gpus, failureReason: own ? cluster.failureReason ?? null : null, createdAt: cluster.createdAt.toISOString(),
    } as ProviderBody;
  }

  async function circuitStates(em: EntityManager) {
    return new Map((await deps.circuits.list(em)).map((c) => [`${c.provider}/${c.gpuType}`, c.state]));
  }

  /** 422 naming kubeconfig unless it is one Kiln may use for an organization: a token or client certificate, a public API server in production. */
  async function checkOwnKubeconfig(kubeconfig: string): Promise<void> {
    let server: string;
    try {
      const credentials = parseKubeconfig(kubeconfig);
      // Kiln runs no command an organization's kubeconfig names.
      if (credentials.awsEks) throw new Error('kubeconfig: an organization\'s cluster is reached with a bearer token or a client certificate, not a command (exec)');
      server = credentials.server;
    } catch (error) {
      throw invalidField('kubeconfig', (error as Error).message);
    }
    if (deps.allowPrivateClusters) return;
    await assertPublicUrl(server).catch((error: unknown) => {
      throw invalidField('kubeconfig', `the cluster's API server ${(error as Error).message.startsWith('getaddrinfo') ? 'does not resolve' : `is refused: ${(error as Error).message}`}`);
    });
  }

  return {
    progress,
    steps,

    async act(em: EntityManager, principal: Principal, action: 'dismiss' | 'restart'): Promise<OnboardingProgressBody> {
      await change(em, principal, (state) => {
        if (action === 'dismiss') state.dismissedAt ??= new Date();
        else Object.assign(state, { dismissedAt: null, skipped: [] });
      });
      return progress(em, principal);
    },

    /** Skips (or unskips) a step that is not done; a step is done only by doing it. */
    async skip(em: EntityManager, principal: Principal, input: SkipStepInput): Promise<OnboardingStepBody> {
      const before = (await steps(em, principal)).find((s) => s.id === input.step)!;
      if (before.done) throw invalidField('step', `${input.step} is already done`);
      await change(em, principal, (state) => {
        const others = state.skipped.filter((s: OnboardingStepId) => s !== input.step);
        state.skipped = input.action === 'skip' ? [...others, input.step] : others;
      });
      return (await steps(em, principal)).find((s) => s.id === input.step)!;
    },

    /** Where the organization can run, in the order placement tries them: its own clusters, then the shared ones. */
    async providers(em: EntityManager, principal: Principal): Promise<ProviderBody[]> {
      const [clusters, circuits] = await Promise.all([deps.clusters.available(em, principal.organizationId), circuitStates(em)]);
      return clusters.map((c) => providerView(c, circuits));
    },

    /** Registers the organization's own Kubernetes cluster (the GPUs read from its nodes, the kubeconfig sealed). */
    async connect(em: EntityManager, principal: Principal, input: CreateProviderInput): Promise<ProviderBody> {
      await checkOwnKubeconfig(input.kubeconfig);
      if (input.gatewayUrl && !deps.allowPrivateClusters) {
        await assertPublicUrl(input.gatewayUrl).catch((error: unknown) => { throw invalidField('gatewayUrl', (error as Error).message); });
      }
      const created = await deps.clusters.create(em, { provider: 'kubernetes', name: input.name, kubeconfig: input.kubeconfig, gatewayUrl: input.gatewayUrl }, { organizationId: principal.organizationId });
      const cluster = (await deps.clusters.available(em, principal.organizationId)).find((c) => c.id === created.id)!;
      return providerView(cluster, await circuitStates(em));
    },
  };
}

export type OnboardingService = ReturnType<typeof createOnboardingService>;
