// /v1/onboarding and /v1/onboarding/steps: each step is done when the thing it is about happens (read from
// the organization's records), never because a client says so; a user skips steps, dismisses and restarts.
// The worker and the inference relay are not running beside a test API: where a step waits on them, the test
// writes the record they write (a deployment's running event, the audit record of an answered inference call).
import test from 'ava';
import { addMember, createApiKey, signup, signupWithDeployment, type TestApi } from '../support/control-plane.ts';
import { startMailingApi, inviteByMail, type TestSmtp } from '../support/smtp.ts';

let api: TestApi;
let smtp: TestSmtp;
let close: () => Promise<void>;
test.before(async () => { ({ api, smtp, close } = await startMailingApi(import.meta.filename)); });
test.after.always(() => close?.());

const STEPS = ['verify_email', 'create_api_key', 'choose_provider', 'first_deployment_running', 'first_inference', 'invite_teammate', 'set_budget'];
const LINK = /https:\/\/kiln\.example\/settings\/profile\/verify-email\?token=(verify_[A-Za-z0-9_-]{43})/;

type User = Awaited<ReturnType<typeof signup>>;
const progress = async (user: User) => (await api.request('GET', `/v1/onboarding?orgId=${user.organizationId}`, { token: user.token })).body;
const steps = async (user: User): Promise<Array<{ id: string; title: string; action: string; status: string; done: boolean; doneAt: string | null; skipped: boolean }>> =>
  (await api.request('GET', `/v1/onboarding/steps?orgId=${user.organizationId}`, { token: user.token })).body;
const doneSteps = async (user: User) => (await steps(user)).filter((s) => s.done).map((s) => s.id);

test('a new organization: nothing done, progress 0%, the next step is verifying the address', async (t) => {
  const user = await signup(api, 'fresh');
  t.deepEqual(await progress(user), { total: 7, done: 0, skipped: 0, percent: 0, complete: false, nextStep: 'verify_email', dismissed: false, dismissedAt: null });
  const all = await steps(user);
  t.deepEqual(all.map((s) => s.id), STEPS);
  for (const step of all) {
    t.like(step, { status: 'todo', done: false, doneAt: null, skipped: false });
    t.true(step.title.length > 0 && /^(GET|POST) \/v1\//.test(step.action));
  }
});

test('steps become done as the real things happen: key, deployment (placed, running), inference, invitation, budget, confirmed address', async (t) => {
  const user = await signup(api, 'doer');
  await createApiKey(api, user.token, 'read_only');
  t.deepEqual(await doneSteps(user), ['create_api_key']);

  const { id: deploymentId } = await (async () => {
    const created = await api.request('POST', '/v1/deployments', { token: user.token, body: { name: 'first', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' } });
    t.is(created.status, 201);
    return created.body as { id: string };
  })();
  // Created and placed on the shared clusters: the choice of where to run is made; not running yet.
  t.deepEqual(await doneSteps(user), ['create_api_key', 'choose_provider']);

  // The worker's status store records the deployment reaching running.
  await api.pool.query(`INSERT INTO deployment_event (id, created_at, deployment_id, organization_id, type, generation, payload) VALUES ($1, now(), $2, $3, 'deployment.running', 1, '{}')`,
    [`evt_onb${Date.now()}`, deploymentId, user.organizationId]);
  t.true((await doneSteps(user)).includes('first_deployment_running'));

  // The relay's audit record of an answered inference call (analytics' rule).
  await api.pool.query(`INSERT INTO audit_log (id, created_at, organization_id, user_id, action, resource_type, resource_id, ip_address, status_code, details)
    VALUES ($1, now(), $2, $3, 'POST /v1/inference', 'deployment', $4, '127.0.0.1', 200, '{"completed": true, "promptTokens": 3, "completionTokens": 5}')`,
  [`aud_onb${Date.now()}`, user.organizationId, user.userId, deploymentId]);
  t.true((await doneSteps(user)).includes('first_inference'));

  await inviteByMail(api, smtp, user.token, `mate-${Date.now()}@example.com`);
  t.true((await doneSteps(user)).includes('invite_teammate'));

  const budget = await api.request('POST', '/v1/cost-controls/alerts', { token: user.token, body: { name: 'monthly', limitCents: 10_000, period: 'month' } });
  t.is(budget.status, 201);
  t.true((await doneSteps(user)).includes('set_budget'));

  // Asking for one's current address mails a confirmation; the token confirms it.
  const asked = await api.request('POST', '/v1/settings/profile', { token: user.token, body: { email: user.email } });
  t.like(asked.body, { email: user.email, pendingEmail: null });
  t.false((await doneSteps(user)).includes('verify_email'), 'not before the token is used');
  const token = LINK.exec(smtp.to(user.email).at(-1)!.text)![1]!;
  t.is((await api.request('POST', '/v1/settings/profile/verify-email', { token: user.token, body: { token } })).status, 200);

  const all = await steps(user);
  t.deepEqual(all.map((s) => s.status), STEPS.map(() => 'done'));
  t.true(all.every((s) => s.doneAt !== null && !Number.isNaN(Date.parse(s.doneAt))));
  t.like(await progress(user), { done: 7, skipped: 0, percent: 100, complete: true, nextStep: null });

  // A second confirmation of an address already confirmed is not asked for: no new mail.
  const mails = smtp.to(user.email).length;
  await api.request('POST', '/v1/settings/profile', { token: user.token, body: { email: user.email } });
  t.is(smtp.to(user.email).length, mails);
});

test('a teammate who joined counts as invited; an address confirmed by accepting an invitation is verified', async (t) => {
  const owner = await signup(api, 'team-owner');
  const member = await addMember(api, owner.organizationId, 'member');
  t.deepEqual(await doneSteps(owner), ['invite_teammate']);
  // The member acts in the owner's organization: the organization's steps, the member's own address.
  const asMember = (await api.request('GET', `/v1/onboarding/steps?orgId=${owner.organizationId}`, { token: member.token })).body;
  t.deepEqual(asMember.filter((s: { done: boolean }) => s.done).map((s: { id: string }) => s.id), ['invite_teammate']);

  const email = `joiner-${Date.now()}@example.com`;
  const { token: invitation } = await inviteByMail(api, smtp, owner.token, email);
  const accepted = await api.request('POST', `/v1/team/invite/${invitation}/accept`, { body: { name: 'Joiner', password: 'correct horse battery' } });
  t.is(accepted.status, 200, JSON.stringify(accepted.body));
  const joined = (await api.request('GET', `/v1/onboarding/steps?orgId=${owner.organizationId}`, { token: accepted.body.access_token })).body;
  t.true(joined.find((s: { id: string }) => s.id === 'verify_email').done);
  t.false((await steps(owner)).find((s) => s.id === 'verify_email')!.done, 'the owner\'s own address is still unconfirmed');
});

test('skipping: a skipped step counts toward progress, unskip undoes it; a client cannot mark a step done, nor skip a done one', async (t) => {
  const user = await signup(api, 'skipper');
  const skipped = await api.request('POST', '/v1/onboarding/steps', { token: user.token, body: { step: 'set_budget' } });
  t.is(skipped.status, 200);
  t.like(skipped.body, { id: 'set_budget', status: 'skipped', done: false, skipped: true });
  t.like(await progress(user), { done: 0, skipped: 1, percent: 14, nextStep: 'verify_email' });

  // Skipping twice, or two at once, keeps each once.
  await Promise.all(['invite_teammate', 'invite_teammate', 'verify_email'].map((step) => api.request('POST', '/v1/onboarding/steps', { token: user.token, body: { step, action: 'skip' } })));
  t.like(await progress(user), { skipped: 3, percent: 42, nextStep: 'create_api_key' });
  t.like((await api.request('POST', '/v1/onboarding/steps', { token: user.token, body: { step: 'verify_email', action: 'unskip' } })).body, { status: 'todo', skipped: false });
  t.like(await progress(user), { skipped: 2, nextStep: 'verify_email' });

  // Unknown fields are 400; an action other than skip or unskip is 422.
  for (const [body, status] of [[{ step: 'create_api_key', done: true }, 400], [{ step: 'create_api_key', status: 'done' }, 400], [{ step: 'create_api_key', action: 'done' }, 422]] as const) {
    const res = await api.request('POST', '/v1/onboarding/steps', { token: user.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.is(res.body.statusCode, status);
  }
  t.false((await steps(user)).find((s) => s.id === 'create_api_key')!.done);

  await createApiKey(api, user.token, 'read_only');
  const doneAlready = await api.request('POST', '/v1/onboarding/steps', { token: user.token, body: { step: 'create_api_key' } });
  t.is(doneAlready.status, 422);
  t.regex(doneAlready.body.message, /step.*already done/);

  // A skipped step that gets done is done, not skipped.
  await inviteByMail(api, smtp, user.token, `later-${Date.now()}@example.com`);
  t.like((await steps(user)).find((s) => s.id === 'invite_teammate'), { status: 'done', skipped: false });
  t.like(await progress(user), { done: 2, skipped: 1 });
});

test('dismiss hides onboarding for the user who dismissed it; restart shows it again with no step skipped', async (t) => {
  const user = await signup(api, 'dismisser');
  await api.request('POST', '/v1/onboarding/steps', { token: user.token, body: { step: 'set_budget' } });
  const dismissed = await api.request('POST', '/v1/onboarding', { token: user.token, body: { action: 'dismiss' } });
  t.is(dismissed.status, 200);
  t.like(dismissed.body, { dismissed: true, skipped: 1 });
  t.false(Number.isNaN(Date.parse(dismissed.body.dismissedAt)));
  // Dismissing again keeps the first time.
  t.is((await api.request('POST', '/v1/onboarding', { token: user.token, body: { action: 'dismiss' } })).body.dismissedAt, dismissed.body.dismissedAt);
  t.like(await progress(user), { dismissed: true });

  // Another member of the organization still sees it.
  const member = await addMember(api, user.organizationId, 'member');
  t.like((await api.request('GET', `/v1/onboarding?orgId=${user.organizationId}`, { token: member.token })).body, { dismissed: false, skipped: 0 });

  const restarted = await api.request('POST', '/v1/onboarding', { token: user.token, body: { action: 'restart' } });
  t.like(restarted.body, { dismissed: false, dismissedAt: null, skipped: 0 });
  t.false((await steps(user)).some((s) => s.skipped));
});

test('bad input: a missing field, a wrong type or an unknown field is 400, an unknown action or step 422, each naming the field', async (t) => {
  const user = await signup(api, 'bad');
  for (const [path, body, status, field] of [
    ['/v1/onboarding', {}, 400, 'action'], ['/v1/onboarding', { action: 'dismiss', extra: 1 }, 400, 'extra'],
    ['/v1/onboarding', { action: 'finish' }, 422, 'action'],
    ['/v1/onboarding/steps', {}, 400, 'step'], ['/v1/onboarding/steps', { step: 'climb_everest' }, 422, 'step'], ['/v1/onboarding/steps', { step: 'set_budget', action: 'complete' }, 422, 'action'],
  ] as const) {
    const res = await api.request('POST', path, { token: user.token, body });
    t.is(res.status, status, `${path} ${JSON.stringify(body)}`);
    t.true(res.body.message.includes(field), res.body.message);
  }
  t.like(await progress(user), { skipped: 0, dismissed: false });
  for (const path of ['/v1/onboarding', '/v1/onboarding/steps']) {
    const res = await api.request('GET', path, { token: user.token });
    t.is(res.status, 400);
    t.regex(res.body.message, /orgId/);
  }
});

test('no credential is 401; a deployments_only key is 403; a read_only key reads but cannot change', async (t) => {
  const user = await signup(api, 'scopes');
  for (const [method, path] of [['GET', `/v1/onboarding?orgId=${user.organizationId}`], ['POST', '/v1/onboarding'], ['GET', `/v1/onboarding/steps?orgId=${user.organizationId}`], ['POST', '/v1/onboarding/steps']] as const) {
    const body = method === 'POST' ? (path === '/v1/onboarding' ? { action: 'dismiss' } : { step: 'set_budget' }) : undefined;
    t.is((await api.request(method, path, { body })).status, 401, `${method} ${path}`);
    const deploymentsOnly = await createApiKey(api, user.token, 'deployments_only');
    t.is((await api.request(method, path, { token: deploymentsOnly.key, body })).status, 403, `${method} ${path}`);
    const readOnly = await createApiKey(api, user.token, 'read_only');
    t.is((await api.request(method, path, { token: readOnly.key, body })).status, method === 'GET' ? 200 : 403, `${method} ${path} read_only`);
  }
  t.like(await progress(user), { skipped: 0, dismissed: false });
});

test('another organization: its orgId is 403, and its records never make this organization\'s steps done', async (t) => {
  const other = await signupWithDeployment(api);
  await createApiKey(api, other.token, 'read_only');
  await api.request('POST', '/v1/onboarding/steps', { token: other.token, body: { step: 'set_budget' } });
  const user = await signup(api, 'isolated');
  for (const path of ['/v1/onboarding', '/v1/onboarding/steps']) {
    t.is((await api.request('GET', `${path}?orgId=${other.organizationId}`, { token: user.token })).status, 403, path);
  }
  t.deepEqual(await doneSteps(user), []);
  t.like(await progress(user), { done: 0, skipped: 0 });
  t.deepEqual(await doneSteps(other), ['create_api_key', 'choose_provider']);
});
