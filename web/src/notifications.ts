// The unread notifications count of the header's badge: read from the API, and read again when the shell's
// socket brings a notification event or the notifications page marks some read (unreadChanged).
import { useCallback, useEffect, useState } from 'react';
import { api, currentOrgId, ok } from './api.ts';

/** How many unread the badge counts exactly; beyond it, "99+". */
export const UNREAD_CAP = 99;
const listeners = new Set<() => void>();

/** Tells every unread badge to count again (a notification arrived, or some were marked read). */
export function unreadChanged(): void {
  for (const listener of listeners) listener();
}

export function useUnreadCount(): number | undefined {
  const [count, setCount] = useState<number>();
  const load = useCallback(() => {
    ok(api.GET('/v1/notifications', { params: { query: { orgId: currentOrgId(), unread: 'true', limit: UNREAD_CAP + 1 } } })).then(
      (page) => setCount(page.data.length),
      () => undefined,
    );
  }, []);
  useEffect(() => {
    load();
    listeners.add(load);
    return () => void listeners.delete(load);
  }, [load]);
  return count;
}
