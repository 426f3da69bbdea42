// Notifications: yours in this organization, unread first (the API's order), marked read one at a time or
// all at once; and which kinds you want in the app and by e-mail. New ones arrive live (the shell's socket).
import { useState } from 'react';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import { useLiveEvents } from '../live.ts';
import { unreadChanged } from '../notifications.ts';
import { EmptyState, ErrorBanner, LoadingBlock, LoadingRows, PageHeader, useApi, useToast } from '../ui/index.ts';

type Notification = Schemas['UserNotification'];
type Kind = Notification['kind'];
type Preferences = Schemas['NotificationPreferences'];

/** Each kind, in words, in the order the preferences list them. */
const KINDS: readonly { kind: Kind; label: string }[] = [
  { kind: 'deployment.running', label: 'A deployment is running' },
  { kind: 'deployment.failed', label: 'A deployment failed' },
  { kind: 'alert.fired', label: 'An alert fired' },
  { kind: 'alert.resolved', label: 'An alert resolved' },
  { kind: 'credits.low', label: 'Credits are running low' },
  { kind: 'credits.exhausted', label: 'Credits ran out' },
  { kind: 'credits.stopped', label: 'Deployments were stopped for lack of credits' },
  { kind: 'invoice.issued', label: 'An invoice was issued' },
  { kind: 'template.updated', label: 'A template you follow changed' },
  { kind: 'platform.announcement', label: 'Announcements from Kiln' },
];

const when = (iso: string) => new Date(iso).toLocaleString();

export default function Notifications() {
  const toast = useToast();
  const list = useApi(async () => (await ok(api.GET('/v1/notifications', { params: { query: { orgId: currentOrgId(), limit: 50 } } }))).data, []);
  // The API has no read of the preferences alone: setting none answers them all.
  const preferences = useApi(() => ok(api.POST('/v1/notifications', { body: {} })), []);
  const [actionError, setActionError] = useState<unknown>();
  const [saving, setSaving] = useState<string>();
  useLiveEvents({ types: ['notification'], onEvent: list.reload, onResync: list.reload });

  const markRead = async (n: Notification) => {
    setActionError(undefined);
    try {
      const read = await ok(api.POST('/v1/notifications/{id}', { params: { path: { id: n.id } } }));
      list.setData((rows) => rows?.map((r) => (r.id === n.id ? read : r)));
      unreadChanged();
    } catch (e) {
      setActionError(e);
    }
  };
  const markAll = async () => {
    setActionError(undefined);
    try {
      const { marked } = await ok(api.POST('/v1/notifications/mark-all-read'));
      toast(marked === 1 ? '1 notification marked read' : `${marked} notifications marked read`);
      list.reload();
      unreadChanged();
    } catch (e) {
      setActionError(e);
    }
  };
  const setPreference = async (channel: 'inApp' | 'email', kind: Kind, on: boolean) => {
    setSaving(`${channel}.${kind}`);
    setActionError(undefined);
    // The box shows its new state at once, and goes back if the API refuses it.
    const before = preferences.data;
    if (before) preferences.setData({ ...before, [channel]: { ...before[channel], [kind]: on } });
    try {
      preferences.setData(await ok(api.POST('/v1/notifications', { body: { [channel]: { [kind]: on } } })));
    } catch (e) {
      preferences.setData(before);
      setActionError(e);
    } finally {
      setSaving(undefined);
    }
  };

  const unread = list.data?.filter((n) => !n.readAt).length ?? 0;
  return (
    <>
      <PageHeader
        title="Notifications"
        description="What happened to your deployments, alerts, credits and invoices, and news from Kiln."
        actions={
          <button type="button" className="button" onClick={() => void markAll()} disabled={!unread}>
            Mark all read
          </button>
        }
      />
      <ErrorBanner error={actionError} />

      <section aria-labelledby="inbox-title" className="stack">
        <h2 id="inbox-title">{list.data ? (unread ? `Unread: ${unread}` : 'All read') : 'Your notifications'}</h2>
        <ErrorBanner error={list.error} onRetry={list.reload} />
        {!list.data && !list.error && <LoadingRows rows={4} columns={2} label="Loading notifications" />}
        {list.data?.length === 0 && <EmptyState title="No notifications yet">Deployments, alerts, credits and invoices tell you here when something happens.</EmptyState>}
        {!!list.data?.length && (
          <ul className="inbox" aria-label="Notifications">
            {list.data.map((n) => (
              <li key={n.id} className={n.readAt ? 'inbox-item' : 'inbox-item inbox-unread'}>
                <div className="grow stack-s">
                  <p>
                    {!n.readAt && <span className="badge badge-unread">Unread</span>} <strong>{n.title}</strong>
                  </p>
                  <p>{n.message}</p>
                  <p className="muted small">
                    {KINDS.find((k) => k.kind === n.kind)?.label ?? n.kind} · {when(n.createdAt)}
                  </p>
                </div>
                {!n.readAt && (
                  <button type="button" className="button" onClick={() => void markRead(n)} aria-label={`Mark “${n.title}” read`}>
                    Mark read
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="card" aria-labelledby="preferences-title">
        <h2 id="preferences-title">What to tell you</h2>
        <p className="muted">In the app: shown here and counted in the header. By e-mail: also mailed to you (where Kiln mails that kind).</p>
        <ErrorBanner error={preferences.error} onRetry={preferences.reload} />
        {!preferences.data && !preferences.error && <LoadingBlock lines={6} label="Loading your preferences" />}
        {preferences.data && <PreferencesTable preferences={preferences.data} saving={saving} onChange={(c, k, on) => void setPreference(c, k, on)} />}
      </section>
    </>
  );
}

function PreferencesTable({ preferences, saving, onChange }: { preferences: Preferences; saving?: string; onChange(channel: 'inApp' | 'email', kind: Kind, on: boolean): void }) {
  return (
    <div className="table-wrap">
      <table className="table preferences">
        <caption className="visually-hidden">Notification preferences</caption>
        <thead>
          <tr>
            <th scope="col">Kind</th>
            <th scope="col">In the app</th>
            <th scope="col">By e-mail</th>
          </tr>
        </thead>
        <tbody>
          {KINDS.map(({ kind, label }) => (
            <tr key={kind}>
              <th scope="row">{label}</th>
              {(['inApp', 'email'] as const).map((channel) => (
                <td key={channel} data-label={channel === 'inApp' ? 'In the app' : 'By e-mail'}>
                  <input
                    type="checkbox"
                    className="checkbox"
                    aria-label={`${label}: ${channel === 'inApp' ? 'in the app' : 'by e-mail'}`}
                    checked={preferences[channel][kind]}
                    aria-busy={saving === `${channel}.${kind}` || undefined}
                    onChange={(e) => onChange(channel, kind, e.target.checked)}
                  />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
