// The onboarding steps and when each was done, read from the records each is about (never from a flag a
// client sets): the caller's confirmed address, the organization's API keys, clusters and deployments, its
// inference calls (the audited relays, analytics' rule), invitations and members, and its budgets.
import type { EntityManager } from '@mikro-orm/postgresql';
import { INFERENCE_CALLS } from '../monitoring/analytics.ts';

export const ONBOARDING_STEPS = [
  'verify_email', 'create_api_key', 'choose_provider', 'first_deployment_running', 'first_inference', 'invite_teammate', 'set_budget',
] as const;
export type OnboardingStepId = (typeof ONBOARDING_STEPS)[number];

/** What a user reads about each step, and the call that does it. */
export const STEP_GUIDE: Readonly<Record<OnboardingStepId, { title: string; description: string; action: string }>> = {
  verify_email: {
    title: 'Verify your e-mail address',
    description: 'Confirm your address with the token mailed to it (asking for your current address mails one); an address confirmed by accepting an invitation or by your identity provider counts.',
    action: 'POST /v1/settings/profile',
  },
  create_api_key: { title: 'Create an API key', description: 'An API key lets scripts and applications call Kiln.', action: 'POST /v1/settings/api-keys' },
  choose_provider: {
    title: 'Choose where to run',
    description: 'Run on Kiln\'s shared GPU clusters (your first deployment chooses them) or connect your own Kubernetes cluster.',
    action: 'POST /v1/onboarding/providers',
  },
  first_deployment_running: { title: 'Run your first deployment', description: 'A deployment of yours has reached running.', action: 'POST /v1/deployments' },
  first_inference: { title: 'Make your first inference call', description: 'A request to one of your deployments\' models has been answered.', action: 'POST /v1/inference' },
  invite_teammate: { title: 'Invite a teammate', description: 'Invite someone to your organization.', action: 'POST /v1/team/invite' },
  set_budget: { title: 'Set a budget', description: 'A spend rule that warns you, or refuses or stops deployments, at an amount you choose.', action: 'POST /v1/cost-controls/alerts' },
};

// One row, a column per step: when it was first done, null while it is not. Explicit organization filters,
// though row-level security holds the request to its organization anyway.
const DONE_AT = `
  SELECT
    (SELECT least(
       (SELECT min(v.confirmed_at) FROM email_verification v WHERE v.user_id = u.id AND v.email = u.email AND v.confirmed_at IS NOT NULL),
       (SELECT min(i.answered_at) FROM invitation i WHERE i.organization_id = ? AND i.email = u.email AND i.state = 'accepted'),
       CASE WHEN u.sso_provisioned THEN u.created_at END)
     FROM "user" u WHERE u.id = ?) AS verify_email,
    (SELECT min(k.created_at) FROM api_key k WHERE k.organization_id = ?) AS create_api_key,
    least(
      (SELECT min(c.created_at) FROM gpu_cluster c WHERE c.organization_id = ?),
      (SELECT min(d.created_at) FROM deployment d WHERE d.organization_id = ? AND d.cluster_id IS NOT NULL)) AS choose_provider,
    (SELECT min(e.created_at) FROM deployment_event e WHERE e.organization_id = ? AND e.type = 'deployment.running') AS first_deployment_running,
    (SELECT a.created_at FROM audit_log a WHERE a.organization_id = ? AND ${INFERENCE_CALLS} ORDER BY a.created_at LIMIT 1) AS first_inference,
    least(
      (SELECT min(i.created_at) FROM invitation i WHERE i.organization_id = ?),
      -- A second member, however they joined.
      (SELECT m.created_at FROM membership m WHERE m.organization_id = ? ORDER BY m.created_at OFFSET 1 LIMIT 1)) AS invite_teammate,
    (SELECT min(r.created_at) FROM alert_rule r WHERE r.organization_id = ? AND r.metric = 'spend') AS set_budget`;

/** When each step was first done for this user in this organization; null: not yet. */
export async function stepsDoneAt(em: EntityManager, organizationId: string, userId: string): Promise<Record<OnboardingStepId, Date | null>> {
  const o = organizationId;
  const [row] = await em.getConnection().execute<Array<Record<OnboardingStepId, string | Date | null>>>(DONE_AT, [o, userId, o, o, o, o, o, o, o, o]);
  // Raw SQL answers timestamps as strings.
  return Object.fromEntries(ONBOARDING_STEPS.map((step) => [step, row?.[step] ? new Date(row[step]) : null])) as Record<OnboardingStepId, Date | null>;
}
