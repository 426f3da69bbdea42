// Alerts and cost controls: rules (/v1/alerts, /api/alerts), budgets (/v1/cost-controls/alerts), the alerts
// they fire (/v1/monitoring/alerts) and where alerts are delivered (/v1/monitoring/webhooks).
import { z } from 'zod';
import { defineRoute, type Route } from '../http/routes.ts';
import { queryOrBodyField } from '../http/validate.ts';
import { DeletedWebhook, WebhookView, WebhookWithSecret } from '../webhooks/schemas.ts';
import type { AlertService } from './alerts.ts';
import type { AlertChannelService } from './channels.ts';
import type { AlertRuleService } from './rules.ts';
import {
  AlertChannelIdQuery, DeleteAlertChannelRequest, AlertRuleIdParams, AlertRuleView, AlertView, BudgetView, CreateAlertChannelRequest, CreateAlertRuleRequest, CreateBudgetRequest,
  DeletedAlertRule, ListAlertsQuery, OrgIdQuery, RaiseAlertRequest, UpdateAlertChannelRequest, UpdateAlertRequest, UpdateAlertRuleRequest,
} from './schemas.ts';

export function alertRoutes(rules: AlertRuleService, alerts: AlertService, channels: AlertChannelService): Route[] {
  const rule = { tag: 'Alerts', resourceType: 'alert_rule' } as const;
  const read = { permission: 'alerts:read' } as const;
  const write = { permission: 'alerts:write' } as const;
  const listRules = (path: string, operationId: string, query?: typeof OrgIdQuery) => defineRoute({
    ...rule, ...read, method: 'GET', path, operationId, summary: 'The organization\'s alert rules, budgets included, with their state as last evaluated',
    ...(query ? { query } : {}), response: z.array(AlertRuleView),
    handle: async ({ state }) => ({ data: await rules.list(state.em, state.principal!) }),
  });
  const createRule = (path: string, operationId: string) => defineRoute({
    ...rule, ...write, method: 'POST', path, operationId, summary: 'Add an alert rule on a metric, a deployment\'s state or spend',
    body: CreateAlertRuleRequest, response: AlertRuleView, successStatus: 201, idempotent: true, errors: [404, 422],
    handle: async ({ body, state }) => ({ data: await rules.create(state.em, state.principal!, body) }),
  });
  return [
    listRules('/v1/alerts', 'listAlertRulesV1', OrgIdQuery),
    createRule('/v1/alerts', 'createAlertRuleV1'),
    defineRoute({
      ...rule, ...write, method: 'PUT', path: '/v1/alerts/{id}', operationId: 'updateAlertRuleV1', summary: 'Change an alert rule or a budget (threshold: its limit in cents); what it watches changed, it starts over from ok, but a budget still reached at its new limit stays reached',
      params: AlertRuleIdParams, body: UpdateAlertRuleRequest, response: AlertRuleView, errors: [404, 422],
      async handle({ params, body, state }) {
        state.resourceId = params.id;
        return { data: await rules.update(state.em, state.principal!, params.id, body) };
      },
    }),
    defineRoute({
      ...rule, ...write, method: 'DELETE', path: '/v1/alerts/{id}', operationId: 'deleteAlertRuleV1', summary: 'Delete an alert rule or a budget (an alert it has firing is resolved; what the budget refused is allowed again)',
      params: AlertRuleIdParams, response: DeletedAlertRule, errors: [404],
      async handle({ params, state }) {
        state.resourceId = params.id;
        return { data: await rules.remove(state.em, state.principal!, params.id) };
      },
    }),
    listRules('/api/alerts', 'listAlertRules'),
    createRule('/api/alerts', 'createAlertRule'),

    defineRoute({
      tag: 'Alerts', resourceType: 'budget', ...read, method: 'GET', path: '/v1/cost-controls/alerts', operationId: 'listBudgetsV1',
      summary: 'The organization\'s budgets (spend alert rules) with their spend as last evaluated; each is changed or deleted as a rule (PUT, DELETE /v1/alerts/{id})',
      query: OrgIdQuery, response: z.array(BudgetView),
      handle: async ({ state }) => ({ data: await rules.listBudgets(state.em, state.principal!) }),
    }),
    defineRoute({
      tag: 'Alerts', resourceType: 'budget', ...write, method: 'POST', path: '/v1/cost-controls/alerts', operationId: 'createBudgetV1',
      summary: 'Add a budget: per day or month, for a deployment or the organization; reached, it alerts, refuses new deployments and scale-ups, or stops deployments',
      body: CreateBudgetRequest, response: BudgetView, successStatus: 201, idempotent: true, errors: [404, 422],
      handle: async ({ body, state }) => ({ data: await rules.createBudget(state.em, state.principal!, body) }),
    }),

    defineRoute({
      tag: 'Alerts', resourceType: 'alert', ...read, method: 'GET', path: '/v1/monitoring/alerts', operationId: 'listAlertsV1',
      summary: 'Firing alerts and those resolved in the last week, newest first',
      query: ListAlertsQuery, response: z.array(AlertView),
      handle: async ({ query, state }) => ({ data: await alerts.list(state.em, state.principal!, query.state) }),
    }),
    defineRoute({
      tag: 'Alerts', resourceType: 'alert', ...write, method: 'POST', path: '/v1/monitoring/alerts', operationId: 'raiseAlertV1',
      summary: 'Raise an alert by hand: delivered to the alert channels, firing until resolved',
      body: RaiseAlertRequest, response: AlertView, successStatus: 201, idempotent: true, errors: [422],
      handle: async ({ body, state }) => ({ data: await alerts.raise(state.em, state.principal!, body) }),
    }),
    defineRoute({
      tag: 'Alerts', resourceType: 'alert', ...write, method: 'PUT', path: '/v1/monitoring/alerts', operationId: 'updateAlertV1',
      summary: 'Acknowledge an alert, silence it (and its rule) until a time, or resolve one raised by hand',
      body: UpdateAlertRequest, response: AlertView, errors: [404, 422],
      async handle({ body, state }) {
        state.resourceId = body.id;
        return { data: await alerts.update(state.em, state.principal!, body) };
      },
    }),

    defineRoute({
      tag: 'Alerts', resourceType: 'webhook_subscription', permission: 'webhooks:read', method: 'GET', path: '/v1/monitoring/webhooks', operationId: 'listAlertChannelsV1',
      summary: 'Alert delivery channels: webhook subscriptions to alert events (never their secrets)',
      query: OrgIdQuery, response: z.array(WebhookView),
      handle: async ({ state }) => ({ data: await channels.list(state.em, state.principal!) }),
    }),
    defineRoute({
      tag: 'Alerts', resourceType: 'webhook_subscription', permission: 'webhooks:write', method: 'POST', path: '/v1/monitoring/webhooks', operationId: 'createAlertChannelV1',
      summary: 'Deliver alert events to a URL, signed and retried (the secret is shown once)',
      body: CreateAlertChannelRequest, response: WebhookWithSecret, successStatus: 201, idempotent: true, errors: [422],
      handle: async ({ body, state }) => ({ data: await channels.create(state.em, state.principal!, body) }),
    }),
    defineRoute({
      tag: 'Alerts', resourceType: 'webhook_subscription', permission: 'webhooks:write', method: 'PUT', path: '/v1/monitoring/webhooks', operationId: 'updateAlertChannelV1',
      summary: 'Change an alert channel\'s URL or events (its secret stays)',
      body: UpdateAlertChannelRequest, response: WebhookView, errors: [404, 422],
      async handle({ body, state }) {
        state.resourceId = body.id;
        return { data: await channels.update(state.em, state.principal!, body) };
      },
    }),
    defineRoute({
      tag: 'Alerts', resourceType: 'webhook_subscription', permission: 'webhooks:write', method: 'DELETE', path: '/v1/monitoring/webhooks', operationId: 'deleteAlertChannelV1',
      summary: 'Stop delivering alerts to a channel',
      query: AlertChannelIdQuery, body: DeleteAlertChannelRequest, optionalBody: true, response: DeletedWebhook, errors: [404],
      async handle({ query, body, state }) {
        const id = queryOrBodyField('id', query.id, body.id);
        state.resourceId = id;
        return { data: await channels.remove(state.em, state.principal!, id) };
      },
    }),
  ];
}
