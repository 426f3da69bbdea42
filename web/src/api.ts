// The dashboard's one way to Kiln: the project's SDK (client/sdk/client.ts, openapi-fetch typed by client/sdk/schema.ts),
// with the session's access token as the bearer. An expired token is refreshed once and the call retried;
// a 401 that refreshing cannot mend ends the session, and the app shows sign-in.
import { createKilnClient, KilnError, ok, type components, type KilnClient } from '../../client/sdk/client.ts';
import { exclusively, readSession, saveSession, sessionFrom, type Session } from './session.ts';

export { KilnError, ok };
export type Schemas = components['schemas'];

const baseUrl = window.location.origin;
/**
 * The SDK retries 429 and 5xx; a person waiting on a page is told sooner (after about 7 s rather than 31) and
 * offered "Try again" by the error banner. A 429 that asks for a longer wait than 4 s is shown at once, with the wait.
 */
const backoffSeconds = [1, 2, 4];
const longestWaitSeconds = 4;

/** Calls that need no session (sign-up, sign-in, refresh), without the bearer. */
export const publicApi: KilnClient = createKilnClient({ baseUrl, backoffSeconds, longestWaitSeconds, userAgent: 'kiln-web' });

/** Trades the refresh token for a new pair; undefined when the session cannot be renewed. */
async function refreshed(stale: Session): Promise<Session | undefined> {
  return exclusively('kiln.refresh', async () => {
    const current = readSession();
    // Another tab renewed it while this one waited: its pair is the live one.
    if (!current || current.refreshToken !== stale.refreshToken) return current;
    try {
      const { data } = await ok(publicApi.POST('/api/auth/refresh', { body: { refresh_token: current.refreshToken } }));
      const next = sessionFrom(data, current);
      saveSession(next);
      return next;
    } catch (error) {
      if (error instanceof KilnError && error.statusCode === 401) return undefined;
      throw error;
    }
  });
}

/** Sets the bearer and the organization on each request; on 401, refreshes once and sends it again. */
const authorizedFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const send = (session: Session) => {
    const attempt = request.clone();
    attempt.headers.set('Authorization', `Bearer ${session.accessToken}`);
    attempt.headers.set('X-Organization-Id', session.organizationId);
    return fetch(attempt);
  };
  let session = readSession();
  if (!session) return signedOut();
  // A token about to expire is renewed first rather than sent to fail.
  if (session.expiresAt - Date.now() < 30_000) session = await refreshed(session);
  if (!session) return signedOut();
  const response = await send(session);
  if (response.status !== 401) return response;
  const renewed = await refreshed(session);
  if (!renewed) return signedOut(response);
  const again = await send(renewed);
  if (again.status === 401) return signedOut(again);
  return again;
};

/** Ends the session (the app's session listener shows sign-in) and answers the call with its 401. */
function signedOut(response?: Response): Response {
  saveSession(undefined);
  return response ?? new Response(JSON.stringify({ code: 'UNAUTHENTICATED', message: 'Your session ended: sign in again.', statusCode: 401 }), {
    status: 401, headers: { 'Content-Type': 'application/json' },
  });
}

/**
 * The typed client for signed-in pages: `await ok(api.GET('/v1/settings/api-keys'))`. Failures are thrown as
 * KilnError (code, message, details): hand them to <ErrorBanner error={...} />.
 */
export const api: KilnClient = createKilnClient({ baseUrl, fetch: authorizedFetch, backoffSeconds, longestWaitSeconds, userAgent: 'kiln-web' });

/** Signs in with e-mail and password and keeps the session. */
export async function signIn(email: string, password: string): Promise<Session> {
  const data = await ok(publicApi.POST('/v1/auth/signin', { body: { email, password } }));
  const session = sessionFrom(data);
  saveSession(session);
  return session;
}

/** Creates the user and their organization, and keeps the session it answers with. */
export async function signUp(input: { email: string; password: string; name: string; organizationName: string }): Promise<Session> {
  const data = await ok(publicApi.POST('/v1/auth/signup', { body: input }));
  const session = sessionFrom(data);
  saveSession(session);
  return session;
}

export function signOut(): void {
  saveSession(undefined);
}

/** The organization the session acts in, for the routes that take `orgId` in their query. */
export function currentOrgId(): string {
  return readSession()?.organizationId ?? '';
}
