// /v1/onboarding/help: Kiln's own documentation (the docs site's pages, the routes' summaries) searched with
// ranked sections and snippets, and a question answered with the best sections, cited. The documentation is
// public (as /v1/openapi is): no credential is needed, any credential may search, and nothing of any
// organization is in it.
import test from 'ava';
import { createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => { api = await startTestApi(import.meta.filename); });
test.after.always(() => api?.close());

type Hit = { id: string; source: string; anchor: string; title: string; snippet: string; score: number };

test('a search ranks the docs section that answers first, with its page URL and anchor, a snippet around the words and a score', async (t) => {
  const res = await api.request('GET', '/v1/onboarding/help?q=invite%20someone%20to%20my%20organization&limit=3');
  t.is(res.status, 200);
  t.is(res.body.query, 'invite someone to my organization');
  const results = res.body.results as Hit[];
  t.true(results.length > 0 && results.length <= 3);
  t.like(results[0], { id: '/docs/concepts/organizations#inviting-someone', source: '/docs/concepts/organizations', anchor: 'inviting-someone', title: 'Inviting someone' });
  t.regex(results[0]!.snippet, /invite/i);
  t.true(results.every((r, i) => i === 0 || results[i - 1]!.score >= r.score), 'best first');
});

test('API routes are searchable by their summaries, and the architecture by folder', async (t) => {
  const routes = await api.request('GET', '/v1/onboarding/help?q=mark%20all%20notifications%20read');
  t.true((routes.body.results as Hit[]).some((r) => r.id === 'openapi#markAllNotificationsRead' && r.title === 'POST /v1/notifications/mark-all-read'));
  const folders = await api.request('GET', '/v1/onboarding/help?q=Temporal%20workflows%20worker');
  t.true((folders.body.results as Hit[]).some((r) => r.id === '/docs/architecture/#folders-workflows' && r.title === 'Folders: workflows/'));
});

test('without q the answer is the top help topics, starting from sign-up to a first deployment', async (t) => {
  const res = await api.request('GET', '/v1/onboarding/help?limit=4');
  t.is(res.status, 200);
  t.is(res.body.query, null);
  t.deepEqual((res.body.results as Hit[]).map((r) => r.id), [
    '/docs/quick-start#set-up', '/docs/guides/first-deployment#from-sign-up-to-a-deployment', '/docs/concepts/inference#inference-and-the-gateway',
    '/docs/guides/sizing#sizing-a-deployment-and-the-dry-run',
  ]);
});

test('words the documentation does not have find nothing', async (t) => {
  const res = await api.request('GET', '/v1/onboarding/help?q=zqxjvw');
  t.is(res.status, 200);
  t.deepEqual(res.body.results, []);
});

test('a question is answered with the best sections quoted and cited', async (t) => {
  const res = await api.request('POST', '/v1/onboarding/help', { body: { question: 'How do I stream an inference answer?' } });
  t.is(res.status, 200);
  t.is(res.body.question, 'How do I stream an inference answer?');
  const inference = '/docs/concepts/inference#inference-and-the-gateway';
  t.like(res.body.citations[0], { type: 'doc', id: inference, title: 'Inference and the gateway', ref: inference });
  t.true(res.body.answer.includes(`From "Inference and the gateway" (${inference})`));
  t.regex(res.body.answer, /stream/);
  t.is(res.body.results.length, res.body.citations.length);
});

test('a question the documentation cannot answer says so, citing nothing', async (t) => {
  const res = await api.request('POST', '/v1/onboarding/help', { body: { question: 'zqxjvw?' } });
  t.is(res.status, 200);
  t.deepEqual(res.body.citations, []);
  t.regex(res.body.answer, /nothing on that/);
});

test('bad input: no question or a wrong type is 400, a question of filler words alone 422, an unknown field 400, a limit out of range 400', async (t) => {
  t.is((await api.request('POST', '/v1/onboarding/help', { body: {} })).status, 400);
  t.is((await api.request('POST', '/v1/onboarding/help', { body: { question: 42 } })).status, 400);
  t.is((await api.request('POST', '/v1/onboarding/help', { body: { question: 'how do I?', extra: 1 } })).status, 400);
  const filler = await api.request('POST', '/v1/onboarding/help', { body: { question: 'How do I?' } });
  t.is(filler.status, 422);
  t.like(filler.body, { code: 'VALIDATION_ERROR' });
  t.is((await api.request('GET', '/v1/onboarding/help?limit=0')).status, 400);
  t.is((await api.request('GET', '/v1/onboarding/help?limit=many')).status, 400);
  t.is((await api.request('GET', `/v1/onboarding/help?q=${'a'.repeat(501)}`)).status, 400);
});

test('credentials: none is needed, and any scope may search (the documentation is public, nothing of an organization is in it)', async (t) => {
  const owner = await signup(api, 'help');
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  for (const token of [undefined, owner.token, deploymentsOnly.key, readOnly.key]) {
    t.is((await api.request('GET', '/v1/onboarding/help?q=templates', { token })).status, 200);
    t.is((await api.request('POST', '/v1/onboarding/help', { token, body: { question: 'What are templates?' } })).status, 200);
  }
  // Another organization's ids mean nothing here: the same answer for everyone, no record of theirs.
  const other = await signup(api, 'help-other');
  const mine = await api.request('POST', '/v1/onboarding/help', { token: owner.token, body: { question: `Why did dep_${'x'.repeat(20)} fail?` } });
  const theirs = await api.request('POST', '/v1/onboarding/help', { token: other.token, body: { question: `Why did dep_${'x'.repeat(20)} fail?` } });
  t.deepEqual(mine.body, theirs.body);
  t.true(mine.body.citations.every((c: { type: string }) => c.type === 'doc'));
});
