// Who is signed in and where they act: the user's profile in that organization (GET /v1/settings/profile: who
// they are, their role, what they may do, whether they administer the platform) and the organization itself
// (GET /v1/settings/organization). Each is asked once per session and organization and shared by the shell and
// every page that shows it, so a page costs only its own calls.
import { api, currentOrgId, ok, type Schemas } from './api.ts';
import { onSessionChange, readSession } from './session.ts';

interface SharedAnswer<T> {
  /** The answer asked once for this session and organization; `fresh` asks again (after a change made elsewhere). */
  get(fresh?: boolean): Promise<T>;
  /** What a save answered becomes the shared answer. */
  remember(value: T): void;
}

function sharedAnswer<T>(ask: (orgId: string) => Promise<T>): SharedAnswer<T> {
  let asked: { key: string; answer: Promise<T> } | undefined;
  const key = () => `${readSession()?.userId ?? ''} ${currentOrgId()}`;
  onSessionChange(() => { asked = undefined; });
  return {
    get(fresh = false) {
      if (fresh || asked?.key !== key()) {
        const answer = ask(currentOrgId());
        // A failure (Kiln unreachable, rate limited) is not remembered: the next page asks again.
        answer.catch(() => { if (asked?.answer === answer) asked = undefined; });
        asked = { key: key(), answer };
      }
      return asked.answer;
    },
    remember(value) {
      asked = { key: key(), answer: Promise.resolve(value) };
    },
  };
}

export const myProfile: SharedAnswer<Schemas['Profile']> = sharedAnswer((orgId) => ok(api.GET('/v1/settings/profile', { params: { query: { orgId } } })));

export const myOrganization: SharedAnswer<Schemas['OrganizationSettings']> = sharedAnswer((orgId) => ok(api.GET('/v1/settings/organization', { params: { query: { orgId } } })));
