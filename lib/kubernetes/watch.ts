// A live copy of one Kubernetes collection (list, then watch), as client-go's informers keep: the caller sees
// every object once as ADDED, then each change, without polling the API server per request.
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeApiError, type KubeApi } from './api.ts';

export interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export interface WatchEvent<T> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: T;
}

export interface CollectionWatch {
  /** Settles once the first list has been delivered (or rejects with why it could not be read). */
  readonly synced: Promise<void>;
}

interface ListAnswer<T> { metadata?: { resourceVersion?: string }; items: T[] }
type WatchLine<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T } | { type: 'ERROR'; object: { code?: number; message?: string } };

const keyOf = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/**
 * Lists `collectionPath` (e.g. `/api/v1/pods?labelSelector=...`), then follows its watch until `signal`
 * aborts. A watch the server ends is resumed from the last resource version; an expired version (410) or a
 * lost connection is answered by listing again, reporting objects that went away meanwhile as DELETED.
 */
export function watchCollection<T extends KubeObject>(
  api: KubeApi,
  collectionPath: string,
  onEvent: (event: WatchEvent<T>) => void,
  options: { signal: AbortSignal; retryMs?: number; onError?: (error: Error) => void },
): CollectionWatch {
  const { signal } = options;
  const known = new Map<string, T>();
  const separator = collectionPath.includes('?') ? '&' : '?';
  let markSynced: () => void = () => {};
  let failSync: (error: Error) => void = () => {};
  const synced = new Promise<void>((resolve, reject) => { markSynced = resolve; failSync = reject; });
  synced.catch(() => {}); // a caller that never awaits it must not see an unhandled rejection

  const relist = async (): Promise<string> => {
    const list = await api.get<ListAnswer<T>>(collectionPath);
    const present = new Map(list.items.map((o) => [keyOf(o), o]));
    for (const [key, old] of known) if (!present.has(key)) { known.delete(key); onEvent({ type: 'DELETED', object: old }); }
    for (const [key, object] of present) {
      const old = known.get(key);
      known.set(key, object);
      if (!old) onEvent({ type: 'ADDED', object });
      else if (old.metadata?.resourceVersion !== object.metadata?.resourceVersion) onEvent({ type: 'MODIFIED', object });
    }
    return list.metadata?.resourceVersion ?? '';
  };

  /** Follows the watch from `version`; answers the version to resume from, or undefined to list again. */
  const follow = async (version: string): Promise<string | undefined> => {
    const path = `${collectionPath}${separator}watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=${version}`;
    for await (const line of api.lines(path, signal)) {
      const event = JSON.parse(line) as WatchLine<T>;
      if (event.type === 'ERROR') return event.object.code === 410 ? undefined : Promise.reject(new Error(`watch ${collectionPath}: ${event.object.message ?? 'error'}`));
      version = event.object.metadata?.resourceVersion ?? version;
      if (event.type === 'BOOKMARK') continue;
      if (event.type === 'DELETED') known.delete(keyOf(event.object));
      else known.set(keyOf(event.object), event.object);
      onEvent({ type: event.type, object: event.object });
    }
    return version;
  };

  void (async () => {
    let first = true;
    while (!signal.aborted) {
      try {
        let version: string | undefined = await relist();
        if (first) { first = false; markSynced(); }
        while (version !== undefined && !signal.aborted) version = await follow(version);
      } catch (error) {
        if (signal.aborted) break;
        if (first) failSync(error as Error);
        options.onError?.(error as Error);
        // A collection that does not exist (404) or a credential refused (401/403) will not heal by retrying fast.
        const slow = error instanceof KubeApiError && [401, 403, 404].includes(error.status);
        await sleep((options.retryMs ?? 1000) * (slow ? 10 : 1), undefined, { signal }).catch(() => {});
      }
    }
  })();
  return { synced };
}
