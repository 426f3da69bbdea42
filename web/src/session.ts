// The signed-in session. A SPA has no cookie of its own here (the API answers tokens in JSON), so the session
// lives in localStorage: every tab shares it, and a reload keeps it. The access token lasts an hour; the
// refresh token rotates on each use and presenting a used one revokes the whole family, so tabs refresh
// one at a time (Web Locks) and a tab that waited takes the pair another tab already got.
export interface Session {
  accessToken: string;
  refreshToken: string;
  /** When the access token expires (ms since the epoch). */
  expiresAt: number;
  userId: string;
  email: string;
  /** The organization the session acts in (the token's, or one chosen later: sent as X-Organization-Id). */
  organizationId: string;
}

const KEY = 'kiln.session';
type Listener = (session: Session | undefined) => void;
const listeners = new Set<Listener>();

export function readSession(): Session | undefined {
  try {
    const raw = localStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Session) : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session | undefined): void {
  if (session) localStorage.setItem(KEY, JSON.stringify(session));
  else localStorage.removeItem(KEY);
  for (const listener of listeners) listener(session);
}

/** Told of every change, in this tab or another (sign-out in one tab signs every tab out). */
export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

window.addEventListener('storage', (event) => {
  if (event.key !== KEY) return;
  const session = readSession();
  for (const listener of listeners) listener(session);
});

/** What sign-up, sign-in, SSO and refresh answer, as a session. */
export function sessionFrom(
  body: { access_token: string; refresh_token: string; expires_in: number; user?: { id: string; email: string; organization_id: string } },
  previous?: Session,
): Session {
  const user = body.user ?? (previous && { id: previous.userId, email: previous.email, organization_id: previous.organizationId });
  if (!user) throw new Error('a session needs its user');
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
    expiresAt: Date.now() + body.expires_in * 1000,
    userId: user.id,
    email: user.email,
    organizationId: previous?.organizationId ?? user.organization_id,
  };
}

/** Runs `task` while no other tab runs one under the same name (where the browser has Web Locks). */
export function exclusively<T>(name: string, task: () => Promise<T>): Promise<T> {
  return navigator.locks ? navigator.locks.request(name, task) : task();
}
