// A deployment's timeline, newest first. Its recorded history comes from the activity feed (GET /v1/activity
// for this deployment, 20 at a time, older ones on asking): the lifecycle events the workflow records
// (created, running, scaled by hand or by the autoscaler, stopped, failed, deleted), what its users asked of it
// (stop, start, restart, scale, a new configuration, each with who asked) and what Kiln itself did to it (a
// budget's or the credits' stop, an optimization). Some edges leave no recorded event (a restart's
// rollout and its end, a stop's or a start's progress): the page's live status changes show those while it
// is open, marked "live".
import { useCallback, useEffect, useState } from 'react';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import type { LiveEvent } from '../live.ts';
import { ErrorBanner, LoadingBlock, statusText } from '../ui/index.ts';

type ActivityEntry = Schemas['ActivityEntry'];
type Tone = 'ok' | 'busy' | 'idle' | 'bad';

const PAGE_SIZE = 20;

interface Item {
  key: string;
  at: string;
  label: string;
  detail: string;
  tone: Tone;
  /** Seen on the socket while the page is open; Kiln keeps no record of it. */
  live: boolean;
}

/** The recorded types' labels: the workflow's lifecycle events, then Kiln's own actions from the audit trail. */
const RECORDED: Readonly<Record<string, { label: string; tone: Tone }>> = {
  'deployment.created': { label: 'Created', tone: 'busy' },
  'deployment.running': { label: 'Running', tone: 'ok' },
  'deployment.scaled': { label: 'Scaled', tone: 'ok' },
  'deployment.recovered': { label: 'Recovered', tone: 'ok' },
  'deployment.stopped': { label: 'Stopped', tone: 'idle' },
  'deployment.failed': { label: 'Failed', tone: 'bad' },
  'deployment.deleted': { label: 'Deleted', tone: 'idle' },
  'deployment.capacity_requested': { label: 'Adding GPU nodes', tone: 'busy' },
  'deployment.stop': { label: 'Stopped by Kiln', tone: 'idle' },
  'deployment.optimize': { label: 'Optimized by Kiln', tone: 'ok' },
};
/** A user's actions from the audit trail: the same types as Kiln's own, asked for by a person (the summary says who). */
const REQUESTED_BY_USER: Readonly<Record<string, { label: string; tone: Tone }>> = {
  'deployment.stop': { label: 'Stop requested', tone: 'idle' },
  'deployment.start': { label: 'Start requested', tone: 'busy' },
  'deployment.restart': { label: 'Restart requested', tone: 'busy' },
  'deployment.scale': { label: 'Scale requested', tone: 'busy' },
  'deployment.update': { label: 'Configuration changed', tone: 'busy' },
};

function recordedItem(entry: ActivityEntry): Item {
  const known = (entry.actor?.kind === 'user' ? REQUESTED_BY_USER : RECORDED)[entry.type];
  return {
    key: entry.id, at: entry.occurredAt, live: false,
    label: known?.label ?? capital(statusText(entry.type.replace(/^deployment\./, ''))),
    tone: known?.tone ?? 'idle',
    // The feed's own sentence (it carries the replica counts, who asked, and the autoscaler's or the failure's reason).
    detail: entry.summary,
  };
}

/** Statuses on the way somewhere: the workflow records no event for entering them. */
const TRANSITIONS: Readonly<Record<string, { label: string; detail: string }>> = {
  deploying: { label: 'Deploying', detail: 'Rolling it out; Kiln waits for its replicas to be ready.' },
  stopping: { label: 'Stopping', detail: 'Taking its replicas down.' },
  updating: { label: 'Updating', detail: 'Replacing its replicas one at a time (a restart or a new configuration).' },
  scaling: { label: 'Scaling', detail: 'Changing how many replicas run.' },
  deleting: { label: 'Deleting', detail: 'Removing it from its cluster.' },
};

/**
 * A live `deployment.status` change worth a line of its own: entering a transition, or the end of an update
 * (a restart or a new configuration), which records no event either. Other edges (running after deploying,
 * stopped, failed, scaled, deleted) come with a recorded event, which the feed brings.
 */
export function liveItem(event: LiveEvent): Item | undefined {
  if (event.type !== 'deployment.status' || !event.id || !event.createdAt) return undefined;
  const status = String(event.data?.status ?? '');
  const replicas = event.data?.replicas;
  const transition = TRANSITIONS[status];
  const base = { key: `live-${event.id}`, at: event.createdAt, live: true };
  if (transition) return { ...base, ...transition, tone: 'busy' };
  if (event.data?.previousStatus !== 'updating') return undefined;
  return {
    ...base, label: 'Update finished', tone: status === 'failed' ? 'bad' : 'ok',
    detail: `Now ${statusText(status)}${typeof replicas === 'number' ? ` with ${replicas} ${replicas === 1 ? 'replica' : 'replicas'}` : ''}.`,
  };
}

interface Pages {
  entries: ActivityEntry[];
  nextCursor: string | null;
}

/** Later first; at the same instant, the feed's order (by id, descending). */
function newestFirst(a: { at: string; key: string }, b: { at: string; key: string }): number {
  const difference = Date.parse(b.at) - Date.parse(a.at);
  if (difference !== 0) return difference;
  return a.key === b.key ? 0 : a.key < b.key ? 1 : -1;
}

/** Entries of both lists once each (fresh ones win), newest first. */
function merge(fresh: ActivityEntry[], kept: ActivityEntry[]): ActivityEntry[] {
  const byId = new Map(kept.map((e) => [e.id, e]));
  for (const e of fresh) byId.set(e.id, e);
  return [...byId.values()].sort((a, b) => newestFirst({ at: a.occurredAt, key: a.id }, { at: b.occurredAt, key: b.id }));
}

/** Today's times as a time; older ones with their day. */
function when(at: string): string {
  const date = new Date(at);
  return date.toDateString() === new Date().toDateString()
    ? date.toLocaleTimeString()
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * `recorded` grows by one whenever the page's socket brings a recorded event (or missed some): the first page
 * is read again and merged into what is shown, so older pages already opened stay. `live` is the page's live
 * status changes of this deployment.
 */
export function DeploymentTimeline({ id, recorded, live }: { id: string; recorded: number; live: readonly LiveEvent[] }) {
  const [pages, setPages] = useState<Pages>();
  const [error, setError] = useState<unknown>();
  const [attempt, setAttempt] = useState(0);
  const [loadingMore, setLoadingMore] = useState(false);

  const load = useCallback(async (cursor?: string) => {
    const { data, pagination } = await ok(api.GET('/v1/activity', {
      params: { query: { orgId: currentOrgId(), category: 'deployments', resourceId: id, limit: PAGE_SIZE, cursor } },
    }));
    return { entries: data, nextCursor: pagination.hasMore ? pagination.nextCursor : null };
  }, [id]);

  useEffect(() => {
    let current = true;
    load().then((first) => {
      if (!current) return;
      setError(undefined);
      // Older pages already shown keep their cursor: the new entries are all newer than them.
      setPages((shown) => (shown ? { entries: merge(first.entries, shown.entries), nextCursor: shown.nextCursor } : first));
    }, (e: unknown) => { if (current) setError(e); });
    return () => { current = false; };
  }, [load, recorded, attempt]);

  const more = async () => {
    if (!pages?.nextCursor) return;
    setLoadingMore(true);
    try {
      const older = await load(pages.nextCursor);
      setPages((shown) => ({ entries: merge(older.entries, shown?.entries ?? []), nextCursor: older.nextCursor }));
    } catch (e) {
      setError(e);
    } finally {
      setLoadingMore(false);
    }
  };

  const liveItems = live.map(liveItem).filter((item): item is Item => item !== undefined);
  const items = [...(pages?.entries ?? []).map(recordedItem), ...liveItems].sort(newestFirst);

  return (
    <section className="card" aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      <ErrorBanner error={error} onRetry={() => setAttempt((n) => n + 1)} />
      {!pages && !error ? <LoadingBlock lines={4} label="Loading events" /> : (
        <ol className="timeline" aria-label="Events, newest first" data-testid="timeline">
          {items.length === 0 && <li className="muted">No events yet.</li>}
          {items.map((item) => (
            <li key={item.key} className={`timeline-${item.tone}`}>
              <div className="timeline-what">
                <span>
                  <strong>{item.label}</strong>
                  {item.live && <> <span className="badge" title="Seen live while this page is open; Kiln keeps no record of it">live</span></>}
                </span>
                <span className="small">{item.detail}</span>
              </div>
              <time className="muted small" dateTime={item.at} title={new Date(item.at).toLocaleString()}>{when(item.at)}</time>
            </li>
          ))}
        </ol>
      )}
      {pages?.nextCursor && (
        <div>
          <button type="button" className="button" disabled={loadingMore} onClick={() => void more()}>{loadingMore ? 'Loading…' : 'Show older events'}</button>
        </div>
      )}
      {liveItems.length > 0 && <p className="muted small">Lines marked live are status changes seen while this page is open; Kiln records no event for them.</p>}
    </section>
  );
}

const capital = (s: string) => (s ? s[0]!.toUpperCase() + s.slice(1) : s);
