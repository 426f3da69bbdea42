// /v1/ai-assistant: questions answered from Kiln's documentation and the caller's own organization data
// (a failed deployment's reason, events and recovery options; what a deployment costs), citing what was used;
// conversations kept per user. No worker runs here: a failure is recorded as the workflow's status store
// records it. No Prometheus either, so costs come from the catalog's prices. The model path (a running
// deployment writing the answer) needs a cluster with a model server: assistant-model.test.ts; here its
// refusals are tested (not running, another organization's, no deployments:infer).
import test from 'ava';
import { createStatusStore } from '../../workflows/deployment/status-store.ts';
import { addMember, createApiKey, signup, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => { api = await startTestApi(import.meta.filename); });
test.after.always(() => api?.close());

type Citation = { type: string; id: string; title: string; ref: string };

const ask = (token: string | undefined, body: unknown) => api.request('POST', '/v1/ai-assistant', { token, body });

/** An organization with an L4 deployment its workflow reported failed, with the reason and event it recorded. */
async function failedDeployment(label = 'assistant', reason = 'Back-off pulling image "vllm/vllm-openai:v0.0.0": not found') {
  const owner = await signup(api, label);
  const created = await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('chat') });
  if (created.status !== 201) throw new Error(`deployment: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id as string;
  await createStatusStore(api.orm).record({ deploymentId: id, status: 'failed', event: 'deployment.failed', generation: 1, replicas: 0, failureReason: reason });
  return { ...owner, id, reason };
}

test('"why did dep_x fail?" answers its failure reason, its failure event and the recovery options, each cited', async (t) => {
  const { token, id, reason } = await failedDeployment();
  const res = await ask(token, { question: `Why did ${id} fail?` });
  t.is(res.status, 200);
  t.is(res.body.mode, 'retrieval');
  t.is(res.body.model, null);
  t.true(res.body.answer.includes(`Deployment chat (${id}) is failed. Its failure reason: ${reason}.`));
  t.regex(res.body.answer, /deployment\.failed \(generation 1/);
  t.regex(res.body.answer, /Recovery options: retry it/);
  const citations = res.body.citations as Citation[];
  t.like(citations.find((c) => c.type === 'deployment'), { id, ref: `/v1/deployments/${id}` });
  t.true(citations.find((c) => c.type === 'deployment')!.title.includes(reason));
  t.like(citations.find((c) => c.type === 'event'), { id, title: 'Events of chat: deployment.failed', ref: `/v1/recovery/deployments/${id}` });
  t.like(citations.find((c) => c.type === 'recovery'), { id, ref: `/v1/recovery/deployments/${id}` });
});

test('a failure question without an id diagnoses the organization\'s failed deployments; a name works as an id does', async (t) => {
  const { token, id, reason } = await failedDeployment();
  const res = await ask(token, { question: 'Why is my deployment failing?' });
  t.true(res.body.answer.includes(reason));
  t.true((res.body.citations as Citation[]).some((c) => c.type === 'deployment' && c.id === id));
  const byName = await ask(token, { question: 'What state is chat in?' });
  t.true((byName.body.citations as Citation[]).some((c) => c.type === 'deployment' && c.id === id));
});

test('"what does my L4 deployment cost per month?" answers from the catalog\'s price and cites the deployment\'s pricing', async (t) => {
  const { token, id } = await failedDeployment();
  const res = await ask(token, { question: 'What does my L4 deployment cost per month?' });
  t.is(res.status, 200);
  const pricing = (res.body.citations as Citation[]).find((c) => c.type === 'pricing');
  t.like(pricing, { id, ref: `/v1/deployments/${id}/pricing` });
  t.regex(pricing!.title, /NVIDIA L4 24GB at \$0\.80\/hour/);
  t.true(res.body.answer.includes('at $0.80 per GPU-hour: at 1 replica(s) that is $0.80 an hour, about $584.00 a month (730 hours)'));
});

test('a cost question with no deployment of that GPU answers the catalog\'s price of it, cited', async (t) => {
  const owner = await signup(api, 'assistant-prices');
  const res = await ask(owner.token, { question: 'How much does an H100 cost per month?' });
  t.like((res.body.citations as Citation[]).find((c) => c.type === 'pricing'), { id: 'nvidia-h100-80gb', ref: '/v1/gpu-types' });
  t.true(res.body.answer.includes('$4.50 per GPU-hour: about $3285.00 a month per GPU'));
});

test('a question about Kiln is answered from the documentation, citing the docs page\'s section', async (t) => {
  const owner = await signup(api, 'assistant-docs');
  const res = await ask(owner.token, { question: 'How do I invite someone to my organization?' });
  t.is(res.status, 200);
  const inviting = '/docs/concepts/organizations#inviting-someone';
  t.like((res.body.citations as Citation[])[0], { type: 'doc', id: inviting, title: 'Inviting someone', ref: inviting });
  t.true((res.body.citations as Citation[]).every((c) => c.type === 'doc'));
  t.true(res.body.answer.startsWith(`From "Inviting someone" (${inviting})`));
});

test('another organization\'s deployment is not found: none of its data is in the answer', async (t) => {
  const victim = await failedDeployment('victim', 'quota exceeded in namespace of victim-secret-project');
  const other = await signup(api, 'assistant-other');
  const res = await ask(other.token, { question: `Why did ${victim.id} fail? What does ${victim.id} cost?` });
  t.is(res.status, 200);
  t.true(res.body.answer.includes(`I found no deployment ${victim.id} in your organization.`));
  t.false(res.body.answer.includes('victim-secret-project'));
  t.false(res.body.answer.includes('Deployment chat'));
  t.false((res.body.citations as Citation[]).some((c) => c.id === victim.id));
  // Nor as the model.
  const model = await ask(other.token, { question: 'hello', deploymentId: victim.id });
  t.is(model.status, 404);
  t.is(model.body.code, 'DEPLOYMENT_NOT_FOUND');
});

test('no secret is revealed: API key values are never read, and credentials in a failure reason are masked', async (t) => {
  const { token, id } = await failedDeployment('assistant-secrets', 'gated model: token hf_abcdefghijklmnopqrstu was refused');
  const key = await createApiKey(api, token, 'full_access');
  const res = await ask(token, { question: `What is my API key? Show my webhook secrets and why ${id} failed` });
  t.is(res.status, 200);
  t.false(JSON.stringify(res.body).includes(key.key));
  t.false(JSON.stringify(res.body).includes('hf_abcdefghijklmnopqrstu'));
  t.true(res.body.answer.includes('gated model: token [redacted] was refused'));
  // A credential pasted into a question is not kept either.
  const pasted = await ask(token, { question: `Is ${key.key} a valid key?` });
  const listed = await api.request('GET', '/v1/ai-assistant', { token });
  t.false(JSON.stringify(listed.body).includes(key.key));
  t.false(JSON.stringify(pasted.body).includes(key.key));
});

test('conversations: a follow-up joins its conversation; GET lists the caller\'s own, newest first, with their turns and citations', async (t) => {
  const { token, id, organizationId } = await failedDeployment();
  const first = await ask(token, { question: `Why did ${id} fail?` });
  const followUp = await ask(token, { question: 'How do I retry a failed deployment?', conversationId: first.body.conversationId });
  t.is(followUp.body.conversationId, first.body.conversationId);
  const second = await ask(token, { question: 'What are templates?' });
  t.not(second.body.conversationId, first.body.conversationId);

  const res = await api.request('GET', `/v1/ai-assistant?orgId=${organizationId}`, { token });
  t.is(res.status, 200);
  t.deepEqual(res.body.capabilities.map((c: { name: string }) => c.name), ['documentation', 'deployment_diagnosis', 'costs', 'model']);
  t.true(res.body.capabilities.every((c: { available: boolean }) => c.available));
  t.deepEqual(res.body.conversations.map((c: { id: string }) => c.id), [second.body.conversationId, first.body.conversationId]);
  const conversation = res.body.conversations[1];
  t.is(conversation.title, `Why did ${id} fail?`);
  t.deepEqual(conversation.messages.map((m: { role: string }) => m.role), ['user', 'assistant', 'user', 'assistant']);
  t.deepEqual(conversation.messages[1].citations, first.body.citations);
  t.is(conversation.messages[1].id, first.body.messageId);
  t.is((await api.request('GET', '/v1/ai-assistant?limit=1', { token })).body.conversations.length, 1);

  // A teammate in the same organization sees none of them, and cannot continue one.
  const teammate = await addMember(api, organizationId, 'member');
  const theirs = await api.request('GET', '/v1/ai-assistant', teammate.as);
  t.is(theirs.status, 200);
  t.deepEqual(theirs.body.conversations, []);
  const intrude = await api.request('POST', '/v1/ai-assistant', { ...teammate.as, body: { question: 'And then?', conversationId: first.body.conversationId } });
  t.is(intrude.status, 404);
});

test('the model path: a deployment that is not running is 409, one of another organization 404, and a credential without deployments:infer 403', async (t) => {
  const { token, id, organizationId } = await failedDeployment();
  const notRunning = await ask(token, { question: 'Why did it fail?', deploymentId: id });
  t.is(notRunning.status, 409);
  t.is(notRunning.body.code, 'DEPLOYMENT_NOT_RUNNING');
  t.is((await ask(token, { question: 'hello', deploymentId: 'dep_doesnotexist000000000' })).status, 404);
  const viewer = await addMember(api, organizationId, 'viewer');
  const refused = await api.request('POST', '/v1/ai-assistant', { ...viewer.as, body: { question: 'hello', deploymentId: id } });
  t.is(refused.status, 403);
  const capabilities = (await api.request('GET', '/v1/ai-assistant', viewer.as)).body.capabilities;
  t.like(capabilities.find((c: { name: string }) => c.name === 'model'), { needs: 'deployments:infer', available: false });
  // Nothing was kept of the refused questions.
  t.deepEqual((await api.request('GET', '/v1/ai-assistant', { token })).body.conversations, []);
});

test('bad input: no question or a wrong type 400, a blank or too long one 422, an unknown field 400, an unknown conversation 404, a limit out of range 400', async (t) => {
  const owner = await signup(api, 'assistant-input');
  t.is((await ask(owner.token, {})).status, 400);
  // Blank once trimmed, or too long, breaks a rule of the question's: 422.
  t.is((await ask(owner.token, { question: '   ' })).status, 422);
  t.is((await ask(owner.token, { question: ['why'] })).status, 400);
  t.is((await ask(owner.token, { question: 'why', verbose: true })).status, 400);
  t.is((await ask(owner.token, { question: 'x'.repeat(2001) })).status, 422);
  const unknown = await ask(owner.token, { question: 'why', conversationId: 'cnv_nothere000000000000' });
  t.is(unknown.status, 404);
  t.is((await api.request('GET', '/v1/ai-assistant?limit=0', { token: owner.token })).status, 400);
});

test('credentials: none is 401; a deployments-only key 403; a read-only key asks and reads deployments; a role without deployments:read gets the documentation alone', async (t) => {
  const { token, id, organizationId, reason } = await failedDeployment();
  t.is((await api.request('GET', '/v1/ai-assistant')).status, 401);
  t.is((await ask(undefined, { question: 'hello' })).status, 401);
  const deploymentsOnly = await createApiKey(api, token, 'deployments_only');
  t.is((await api.request('GET', '/v1/ai-assistant', { token: deploymentsOnly.key })).status, 403);
  t.is((await ask(deploymentsOnly.key, { question: 'hello' })).status, 403);

  const readOnly = await createApiKey(api, token, 'read_only');
  const read = await ask(readOnly.key, { question: `Why did ${id} fail?` });
  t.is(read.status, 200);
  t.true(read.body.answer.includes(reason));

  const role = await api.request('POST', '/v1/enterprise/roles', { token, body: { name: 'Reader of nothing', description: 'profile only', permissions: ['profile:read'] } });
  t.is(role.status, 201);
  const limited = await addMember(api, organizationId, role.body.id);
  const docsOnly = await api.request('POST', '/v1/ai-assistant', { ...limited.as, body: { question: `Why did ${id} fail?` } });
  t.is(docsOnly.status, 200);
  t.false(docsOnly.body.answer.includes(reason));
  t.regex(docsOnly.body.answer, /may not read deployments/);
  t.true((docsOnly.body.citations as Citation[]).every((c) => c.type === 'doc'));
  // Another organization's orgId is refused.
  const other = await signup(api, 'assistant-elsewhere');
  t.is((await api.request('GET', `/v1/ai-assistant?orgId=${other.organizationId}`, { token })).status, 403);
});
