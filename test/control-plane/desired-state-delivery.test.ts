// A change saved while Temporal is unreachable is not lost: the redelivery pass sends it once Temporal answers.
import test from 'ava';
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { createDeploymentOrchestrator } from '../../control-plane/deployments/orchestrator.ts';
import { createDesiredStateDelivery } from '../../control-plane/deployments/desired-state-delivery.ts';
import { freePort } from '../../infra/servers/process.ts';
import { desiredStatesSent, signup, startTestApi, validDeployment } from '../support/control-plane.ts';
import { testTemporalAddress } from '../support/temporal.ts';

const log = pino({ level: 'silent' });
// Nothing listens there: the app's Temporal is down for the whole file.
const api = await startTestApi(import.meta.filename, { orchestratorTemporalAddress: `127.0.0.1:${await freePort()}` });
test.after.always(() => api.close());

async function sentGeneration(id: string): Promise<{ generation: number; sent_generation: number }> {
  const { rows } = await api.pool.query('select generation, sent_generation from deployment where id = $1', [id]);
  return rows[0];
}

test.serial('a deployment created while Temporal is down is saved, then delivered by the redelivery pass', async (t) => {
  const user = await signup(api);
  const created = await api.request('POST', '/api/deployments', { token: user.token, body: validDeployment('offline-llama') });
  t.is(created.status, 201);
  const id = created.body.data.id as string;
  t.deepEqual(await sentGeneration(id), { generation: 1, sent_generation: 0 });
  await t.throwsAsync(desiredStatesSent(api, id), undefined, 'no workflow was started');

  // Temporal still down: the pass delivers nothing and keeps the change.
  const down = createDesiredStateDelivery({ orchestrator: createDeploymentOrchestrator(new Client({ connection: Connection.lazy({ address: `127.0.0.1:${await freePort()}` }) })), log });
  t.is(await down.resend(api.orm, { graceMs: 0 }), 0);
  t.is((await sentGeneration(id)).sent_generation, 0);

  // Temporal answers again.
  const up = createDesiredStateDelivery({ orchestrator: createDeploymentOrchestrator(api.workflows), log });
  t.true(await up.resend(api.orm, { graceMs: 0 }) >= 1);
  t.deepEqual(await sentGeneration(id), { generation: 1, sent_generation: 1 });
  const sent = await desiredStatesSent(api, id);
  t.deepEqual(sent.map((d) => [d.generation, d.model]), [[1, 'meta-llama/Llama-3.1-8B-Instruct']]);

  // Nothing left to send: a second pass sends nothing twice.
  await up.resend(api.orm, { graceMs: 0 });
  t.is((await desiredStatesSent(api, id)).length, 1);
});

test.serial('a later change made while Temporal is down is delivered as the newest generation', async (t) => {
  const user = await signup(api);
  const created = await api.request('POST', '/api/deployments', { token: user.token, body: { ...validDeployment('offline-scale'), maxReplicas: 4 } });
  const id = created.body.data.id as string;
  const scaled = await api.request('POST', `/v1/deployments/${id}/actions`, { token: user.token, body: { action: 'scale', replicas: 3 } });
  t.is(scaled.status, 200);
  t.deepEqual(await sentGeneration(id), { generation: 2, sent_generation: 0 });

  const up = createDesiredStateDelivery({ orchestrator: createDeploymentOrchestrator(api.workflows), log });
  await up.resend(api.orm, { graceMs: 0 });
  const sent = await desiredStatesSent(api, id);
  t.deepEqual(sent.map((d) => [d.generation, d.replicas]), [[2, 3]]);
});

test.serial('recent changes are left to the request that saved them', async (t) => {
  const user = await signup(api);
  const created = await api.request('POST', '/api/deployments', { token: user.token, body: validDeployment('just-saved') });
  const id = created.body.data.id as string;
  const up = createDesiredStateDelivery({ orchestrator: createDeploymentOrchestrator(new Client({ connection: await Connection.connect({ address: testTemporalAddress() }) })), log });
  await up.resend(api.orm, { graceMs: 60_000 });
  t.is((await sentGeneration(id)).sent_generation, 0);
});
