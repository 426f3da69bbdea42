// The signed-in user's profile in the organization the session acts in (GET /v1/settings/profile): who they
// are, their role there, what they may do and whether they administer the platform. Asked once per session
// and organization, and shared by every page that hides controls.
import { api, currentOrgId, ok, type Schemas } from './api.ts';
import { onSessionChange, readSession } from './session.ts';

let asked: { key: string; answer: Promise<Schemas['Profile']> } | undefined;

export function myProfile(): Promise<Schemas['Profile']> {
  const key = `${readSession()?.userId ?? ''} ${currentOrgId()}`;
  if (asked?.key !== key) {
    const answer = ok(api.GET('/v1/settings/profile', { params: { query: { orgId: currentOrgId() } } }));
    // A failure (Kiln unreachable) is not remembered: the next page asks again.
    answer.catch(() => { if (asked?.answer === answer) asked = undefined; });
    asked = { key, answer };
  }
  return asked.answer;
}

onSessionChange(() => { asked = undefined; });
