// GET /v1/activity: the organization's activity feed (cursor pages, newest first).
import { z } from 'zod';
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import { ActivityView, ListActivityQuery } from './schemas.ts';
import type { ActivityService } from './service.ts';

export function activityRoutes(activity: ActivityService): Route[] {
  return [
    defineRoute({
      tag: 'Organizations', resourceType: 'activity', permission: 'organization:read', method: 'GET', path: '/v1/activity', operationId: 'listActivity',
      summary: 'The organization\'s activity, newest first: deployments\' lifecycle and the actions users and Kiln took on them, members, API keys, alerts and billing (top-ups, grants, adjustments, '
        + 'balance notices, invoices; metering debits are left out, and billing lines need billing:read); filters by category, type, resource and time; cursor pagination',
      query: ListActivityQuery, response: z.array(ActivityView), list: true,
      handle: async ({ query, state }) => pageReply(await activity.list(state.em, state.principal!, query)),
    }),
  ];
}
