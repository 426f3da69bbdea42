// /v1/notifications: the caller's own notifications in their organization (theirs and the live platform
// announcements), marking them read, and which kinds they want in the app and by e-mail. Every role and every
// credential that reads the caller's profile reads their notifications; marking and preferences change it.
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import type { InboxService } from './inbox.ts';
import {
  ListMyNotificationsQuery, MarkedAllRead, MyNotificationView, NotificationIdParams, NotificationPreferencesRequest, NotificationPreferencesView,
} from './schemas.ts';

const common = { tag: 'Notifications', resourceType: 'notification' } as const;

export function inboxRoutes(inbox: InboxService): Route[] {
  return [
    defineRoute({
      ...common, permission: 'profile:read', method: 'GET', path: '/v1/notifications', operationId: 'listNotifications',
      summary: 'Your notifications in this organization (deployments, alerts, credits, invoices, template updates, platform announcements): unread first, then newest first',
      query: ListMyNotificationsQuery, response: MyNotificationView.array(), list: true,
      handle: async ({ query, state }) => pageReply(await inbox.list(state.em, state.principal!, query)),
    }),
    defineRoute({
      ...common, permission: 'profile:write', method: 'POST', path: '/v1/notifications', operationId: 'setNotificationPreferences',
      summary: 'Which kinds of notification you want in the app and by e-mail (absent kinds keep their setting); answers every kind\'s setting',
      body: NotificationPreferencesRequest, response: NotificationPreferencesView,
      handle: async ({ body, state }) => ({ data: await inbox.setPreferences(state.em, state.principal!, body) }),
    }),
    defineRoute({
      ...common, permission: 'profile:write', method: 'POST', path: '/v1/notifications/mark-all-read', operationId: 'markAllNotificationsRead',
      summary: 'Marks all your unread notifications read; answers how many',
      response: MarkedAllRead,
      handle: async ({ state }) => ({ data: await inbox.markAllRead(state.em, state.principal!) }),
    }),
    defineRoute({
      ...common, permission: 'profile:write', method: 'POST', path: '/v1/notifications/{id}', operationId: 'markNotificationRead',
      summary: 'Marks one of your notifications read (again: no change)',
      params: NotificationIdParams, response: MyNotificationView, errors: [404],
      handle: async ({ params, state }) => {
        state.resourceId = params.id;
        return { data: await inbox.markRead(state.em, state.principal!, params.id) };
      },
    }),
  ];
}
