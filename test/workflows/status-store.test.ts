// The workflow's status writes on real PostgreSQL, read back through the public API.
import test from 'ava';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { DeploymentEventSchema } from '../../control-plane/deployments/deployment-event.entity.ts';
import { createStatusStore } from '../../workflows/deployment/status-store.ts';
import { addMember, signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => { api = await startTestApi(import.meta.filename); });
test.after.always(() => api?.close());

async function newDeployment(name: string) {
  const { token } = await signup(api);
  const { body } = await api.request('POST', '/api/deployments', { token, body: validDeployment(name) });
  return { token, id: body.data.id as string };
}

const events = (deploymentId: string) => api.orm.em.fork().find(DeploymentEventSchema, { deploymentId }, { orderBy: { createdAt: 'asc' } });

test('edges set the status users read, and each edge event is stored once with the webhook payload', async (t) => {
  const { token, id } = await newDeployment('edges');
  const store = createStatusStore(api.orm);
  await store.record({ deploymentId: id, status: 'deploying', generation: 1, replicas: 0 });
  await store.record({ deploymentId: id, status: 'running', event: 'deployment.running', generation: 1, replicas: 2 });
  await store.record({ deploymentId: id, status: 'running', event: 'deployment.running', generation: 1, replicas: 2 }); // a retried write

  const read = await api.request('GET', `/api/deployments/${id}`, { token });
  t.like(read.body.data, { status: 'running', state: 'HEALTHY', currentReplicas: 2 });
  const stored = await events(id);
  t.is(stored.length, 1);
  t.like(stored[0]!.payload, { event: 'deployment.running', data: { id, name: 'edges', status: 'running', gpu: read.body.data.gpu, replicas: 2, endpoint: read.body.data.endpoint } });
});

test('a scaled edge\'s event carries the replicas before and after it', async (t) => {
  const { id } = await newDeployment('grown');
  const store = createStatusStore(api.orm);
  await store.record({ deploymentId: id, status: 'running', event: 'deployment.scaled', generation: 2, replicas: 3, previousReplicas: 1, reason: 'the load rose' });
  t.like((await events(id))[0]!.payload, { event: 'deployment.scaled', data: { status: 'running', replicas: 3, previousReplicas: 1, reason: 'the load rose' } });
});

test('a failed edge keeps its reason; deleted removes the deployment from reads', async (t) => {
  const { token, id } = await newDeployment('doomed');
  const store = createStatusStore(api.orm);
  await store.record({ deploymentId: id, status: 'failed', event: 'deployment.failed', generation: 1, replicas: 0, failureReason: '1 of 1 replicas cannot be placed' });
  t.like((await events(id))[0]!.payload, { data: { status: 'failed', reason: '1 of 1 replicas cannot be placed' } });
  t.like((await api.request('GET', `/api/deployments/${id}`, { token })).body.data, { status: 'failed', failureReason: '1 of 1 replicas cannot be placed' });

  await store.record({ deploymentId: id, status: 'deleted', event: 'deployment.deleted', generation: 2, replicas: 0 });
  t.is((await api.request('GET', `/api/deployments/${id}`, { token })).status, 404);
  t.deepEqual((await events(id)).map((e) => e.type), ['deployment.failed', 'deployment.deleted']);
});

test('running and failed edges notify the organization\'s owners and admins once, in the app, but those who turned the kind off', async (t) => {
  const owner = await signup(api);
  const { body } = await api.request('POST', '/api/deployments', { token: owner.token, body: validDeployment('told') });
  const id = body.data.id as string;
  const admin = await addMember(api, owner.organizationId, 'admin');
  const member = await addMember(api, owner.organizationId, 'member');
  t.is((await api.request('POST', '/v1/notifications', { ...admin.as, body: { inApp: { 'deployment.running': false } } })).status, 200);

  const store = createStatusStore(api.orm);
  await store.record({ deploymentId: id, status: 'running', event: 'deployment.running', generation: 1, replicas: 1 });
  await store.record({ deploymentId: id, status: 'running', event: 'deployment.running', generation: 1, replicas: 1 }); // a retried write
  await store.record({ deploymentId: id, status: 'scaling', event: 'deployment.scaled', generation: 2, replicas: 1 });
  await store.record({ deploymentId: id, status: 'failed', event: 'deployment.failed', generation: 3, replicas: 0, failureReason: 'image pull error' });

  const owners = (await api.request('GET', `/v1/notifications?orgId=${owner.organizationId}`, { token: owner.token })).body.data;
  t.like(owners, [
    { kind: 'deployment.failed', title: 'Deployment told failed', message: 'Deployment told failed: image pull error.', severity: 'critical', data: { deploymentId: id, reason: 'image pull error' } },
    { kind: 'deployment.running', title: 'Deployment told is running', data: { deploymentId: id, status: 'running' } },
  ]);
  t.is(owners.length, 2);
  t.deepEqual((await api.request('GET', `/v1/notifications?orgId=${owner.organizationId}`, admin.as)).body.data.map((n: { kind: string }) => n.kind), ['deployment.failed']);
  t.deepEqual((await api.request('GET', `/v1/notifications?orgId=${owner.organizationId}`, member.as)).body.data, []);
});

test('each edge is logged once written, with the deployment and workflow id; a failure at warn with its reason', async (t) => {
  const { id } = await newDeployment('logged');
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } }));
  const store = createStatusStore(api.orm, undefined, log);
  await store.record({ deploymentId: id, status: 'running', event: 'deployment.running', generation: 1, replicas: 2 });
  await store.record({ deploymentId: id, status: 'failed', event: 'deployment.failed', generation: 2, replicas: 0, failureReason: 'image pull error' });
  t.like(lines, [
    { level: 30, msg: 'deployment running', deploymentId: id, workflowId: id, status: 'running', generation: 1, replicas: 2, event: 'deployment.running' },
    { level: 40, msg: 'deployment failed', deploymentId: id, workflowId: id, status: 'failed', generation: 2, reason: 'image pull error' },
  ]);
  t.is(lines.length, 2);
});
