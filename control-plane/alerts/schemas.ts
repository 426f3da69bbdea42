// Payloads of the alert rules (/v1/alerts, /api/alerts), budgets (/v1/cost-controls/alerts) and alerts
// (/v1/monitoring/alerts). Rules cross-checked beyond their types (a threshold a metric needs, an action only
// a budget takes) are the service's: 422 naming the field.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';
import { ALERT_EVENTS } from '../../lib/alerts/events.ts';
import { webhookSecret, webhookUrl } from '../webhooks/schemas.ts';
import { ALERT_ACTIONS, ALERT_COMPARISONS, ALERT_METRICS, ALERT_QUANTILES, RULE_STATES, SPEND_BASES, SPEND_PERIODS } from '../../lib/alerts/rules.ts';

const name = z.string().trim().min(1).max(100).meta({ example: 'chat p95 latency' });
const id = z.string().max(64);
const forSeconds = z.number().int().min(0).max(86_400)
  .meta({ description: 'How long the condition must hold before the rule fires (the `for` duration), seconds; 0: at once.' });

const ruleFields = {
  name,
  metric: z.enum(ALERT_METRICS).meta({
    description: 'latency and time_to_first_token: seconds at `quantile`; error_rate: aborted over all requests (0..1); queue: requests waiting; '
      + 'replicas_at_max and deployment_failed: yes or no (no threshold); spend: cents in `period` (a budget).',
  }),
  deploymentId: id.nullable().optional().meta({ description: 'One deployment; absent or null: the organization\'s worst deployment (spend: all of them together).' }),
  threshold: z.number().min(0).max(1e12).optional().meta({ description: 'Required except for yes-or-no metrics. Spend: the limit in cents, reached at that amount.' }),
  comparison: z.enum(ALERT_COMPARISONS).optional().meta({ description: 'Fires above (default) or below the threshold.' }),
  quantile: z.enum(ALERT_QUANTILES).optional().meta({ description: 'Latency metrics: the percentile compared (default p95).' }),
  forSeconds: forSeconds.optional(),
  period: z.enum(SPEND_PERIODS).optional().meta({ description: 'Spend only (required): the calendar day or month, UTC.' }),
  basis: z.enum(SPEND_BASES).optional().meta({ description: 'Spend only: spent so far (default), or the forecast to the period\'s end at the current hourly cost.' }),
  action: z.enum(ALERT_ACTIONS).optional().meta({ description: 'notify (default); spend only: refuse new deployments and scale-ups (402), or stop the deployments it covers.' }),
  enabled: z.boolean().optional(),
};

export const CreateAlertRuleRequest = z.strictObject(ruleFields).meta({ id: 'CreateAlertRuleRequest' });
export const UpdateAlertRuleRequest = z.strictObject({ ...ruleFields, name: name.optional(), metric: ruleFields.metric.optional() })
  .meta({ id: 'UpdateAlertRuleRequest', description: 'The fields to change; the rule as changed is checked whole.' });

export const CreateBudgetRequest = z.strictObject({
  name,
  limitCents: z.number().int().min(1).max(1e12).meta({ description: 'The budget, in cents: reached at that amount.' }),
  period: z.enum(SPEND_PERIODS),
  deploymentId: id.nullable().optional().meta({ description: 'One deployment\'s spend; absent or null: the organization\'s.' }),
  basis: z.enum(SPEND_BASES).optional(),
  action: z.enum(ALERT_ACTIONS).optional().meta({ description: 'refuse (default): new deployments and scale-ups are refused (402 BUDGET_EXCEEDED) while reached; stop: the deployments it covers are stopped too; notify: alerts only.' }),
  forSeconds: forSeconds.optional(),
  enabled: z.boolean().optional(),
}).meta({ id: 'CreateBudgetRequest' });

export const AlertRuleIdParams = z.object({ id });
export const OrgIdQuery = z.strictObject({ ...orgIdQuery });

const time = z.iso.datetime().nullable();

export const AlertRuleView = z.object({
  id: z.string().meta({ example: 'alr_0123456789abcdefghij' }),
  name: z.string(),
  metric: z.enum(ALERT_METRICS),
  deploymentId: z.string().optional().meta({ description: 'The deployment watched; absent: the whole organization.' }),
  deploymentName: z.string().optional().meta({ description: 'That deployment\'s name, so a list needs no second call.' }),
  threshold: z.number().nullable(),
  comparison: z.enum(ALERT_COMPARISONS),
  quantile: z.enum(ALERT_QUANTILES).nullable(),
  forSeconds: z.number().int(),
  period: z.enum(SPEND_PERIODS).nullable(),
  basis: z.enum(SPEND_BASES).nullable(),
  action: z.enum(ALERT_ACTIONS),
  enabled: z.boolean(),
  state: z.enum(RULE_STATES).meta({ description: 'ok, pending (holding, not yet for its duration) or firing, as last evaluated.' }),
  since: time,
  lastValue: z.number().nullable(),
  evaluatedAt: time,
  silencedUntil: time,
  createdAt: z.iso.datetime(),
}).meta({ id: 'AlertRule' });

export const BudgetView = z.object({
  id: z.string(),
  name: z.string(),
  limitCents: z.number().int(),
  period: z.enum(SPEND_PERIODS),
  basis: z.enum(SPEND_BASES),
  deploymentId: z.string().optional().meta({ description: 'The deployment whose spend counts; absent: the organization\'s.' }),
  deploymentName: z.string().optional().meta({ description: 'That deployment\'s name, so a list needs no second call.' }),
  action: z.enum(ALERT_ACTIONS),
  enabled: z.boolean(),
  state: z.enum(RULE_STATES),
  spentCents: z.number().nullable().meta({ description: 'Spend (or forecast) at the last evaluation; null before the first.' }),
  evaluatedAt: time,
  createdAt: z.iso.datetime(),
}).meta({ id: 'Budget' });

export const DeletedAlertRule = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'DeletedAlertRule' });

export const AlertView = z.object({
  id: z.string().meta({ example: 'alt_0123456789abcdefghij' }),
  ruleId: z.string().nullable().meta({ description: 'null: raised by hand.' }),
  name: z.string(),
  metric: z.string(),
  message: z.string(),
  state: z.enum(['firing', 'resolved']),
  value: z.number().nullable(),
  threshold: z.number().nullable(),
  startedAt: z.iso.datetime(),
  firedAt: z.iso.datetime(),
  resolvedAt: time,
  acknowledgedAt: time,
  acknowledgedBy: z.string().nullable(),
  silencedUntil: time,
}).meta({ id: 'Alert' });

export const ListAlertsQuery = z.strictObject({
  ...orgIdQuery,
  state: z.enum(['firing', 'resolved']).optional().meta({ description: 'Only firing, or only resolved; both when absent.' }),
});

export const RaiseAlertRequest = z.strictObject({
  name,
  message: z.string().max(2000).optional(),
}).meta({ id: 'RaiseAlertRequest', description: 'An alert raised by hand (an outside monitor, a drill): firing until resolved with PUT.' });

export const UpdateAlertRequest = z.strictObject({
  id,
  action: z.enum(['acknowledge', 'silence', 'unsilence', 'resolve']).meta({
    description: 'acknowledge; silence its notifications (and its rule\'s) until `until`; unsilence; resolve (alerts raised by hand only).',
  }),
  until: z.iso.datetime({ offset: true }).optional().meta({ description: 'silence: until when (required, in the future).' }),
}).meta({ id: 'UpdateAlertRequest' });

export type CreateAlertRuleInput = z.infer<typeof CreateAlertRuleRequest>;
export type UpdateAlertRuleInput = z.infer<typeof UpdateAlertRuleRequest>;
export type CreateBudgetInput = z.infer<typeof CreateBudgetRequest>;
export type RaiseAlertInput = z.infer<typeof RaiseAlertRequest>;
export type UpdateAlertInput = z.infer<typeof UpdateAlertRequest>;

const alertEvents = z.array(z.enum(ALERT_EVENTS)).min(1).max(ALERT_EVENTS.length);

export const CreateAlertChannelRequest = z.strictObject({
  url: webhookUrl,
  events: alertEvents.optional().meta({ description: 'Alert events delivered there; both when absent.' }),
  secret: webhookSecret,
}).meta({ id: 'CreateAlertChannelRequest' });

export const UpdateAlertChannelRequest = z.strictObject({ id, url: webhookUrl.optional(), events: alertEvents.optional() }).meta({ id: 'UpdateAlertChannelRequest' });

const channelId = z.string().min(1).max(64).optional().meta({ description: 'The channel: in the query or in the JSON body (either; both must agree).', example: 'whk_0123456789abcdefghij' });
export const AlertChannelIdQuery = z.strictObject({ id: channelId });
export const DeleteAlertChannelRequest = z.strictObject({ id: channelId }).meta({ id: 'DeleteAlertChannelRequest' });
