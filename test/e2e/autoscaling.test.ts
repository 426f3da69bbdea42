// Kiln's autoscaler end to end: the simulated model servers' vLLM metrics, scraped by a real Prometheus, drive
// each deployment's workflow to add replicas under load, remove them after, scale to zero when idle, and wake
// on the first request, which the gateway holds until a replica is Ready (never dropped, never a 5xx).
import anyTest, { type TestFn } from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { deploymentWhen, newTenant, startKiln, type Kiln } from '../support/kiln.ts';

interface Context {
  kiln: Kiln;
  tenant: Awaited<ReturnType<typeof newTenant>>;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const kiln = await startKiln(import.meta.filename, { nodePools: [{ gpuType: 'nvidia-l4', nodes: 3, gpusPerNode: 1 }] });
  t.context = { kiln } as Context; // stopped by the after hook even if the rest of this set-up fails
  t.context = { kiln, tenant: await newTenant(kiln, 'autoscaling') };
});
test.after.always(async (t) => {
  await t.context.kiln?.stop();
});

/** The simulator generates a token each 10 ms: 400 tokens keep a request in flight for about 4 s. */
const chat = (deployment: string, maxTokens = 8) => ({ deployment, messages: [{ role: 'user', content: 'Hello' }], max_tokens: maxTokens });

test('a deployment at zero serves its first request; load adds replicas up to the maximum, and its end removes them down to zero', async (t) => {
  const { kiln, tenant } = t.context;
  const infer = (body: unknown) => kiln.request('POST', '/v1/inference', { token: tenant.key, body });
  const created = await kiln.request('POST', '/api/deployments', {
    token: tenant.key,
    body: {
      name: 'elastic', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 0, minReplicas: 0, maxReplicas: 3,
      autoscaling: { targetRequestsPerReplica: 2, scaleDownDelaySeconds: 5, scaleToZeroAfterSeconds: 15 },
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.data.id as string;
  const idle = await deploymentWhen(kiln, tenant.key, id, (d) => d.status === 'scaled_to_zero' || d.status === 'failed', 'deployed at zero replicas');
  t.is(idle.status, 'scaled_to_zero', idle.failureReason ?? undefined);
  t.like(idle, { state: 'IDLE', currentReplicas: 0, minReplicas: 0, autoscaling: { targetRequestsPerReplica: 2 } });

  // The first request wakes it and is answered once a replica is Ready.
  const wakeStarted = Date.now();
  const first = await infer(chat(id));
  t.is(first.status, 200, JSON.stringify(first.body));
  t.log(`woken from zero and answered in ${((Date.now() - wakeStarted) / 1000).toFixed(1)} s`);
  await deploymentWhen(kiln, tenant.key, id, (d) => d.status === 'running' && d.currentReplicas === 1, 'running one replica');

  // Load: rounds of 8 concurrent long requests (in flight 8 at a target of 2: 4 replicas wanted, 3 allowed).
  const answers: number[] = [];
  let loading = true;
  const load = (async () => {
    while (loading) {
      const round = await Promise.all(Array.from({ length: 8 }, () => infer(chat(id, 400))));
      answers.push(...round.map((r) => r.status));
    }
  })();
  const scaledUp = await deploymentWhen(kiln, tenant.key, id, (d) => d.currentReplicas === 3 && d.status === 'running', 'scaled up to the maximum', 180_000)
    .finally(() => { loading = false; });
  await load;
  t.is(scaledUp.replicas, 0, 'the replica count the user set is kept; the autoscaler\'s shows as currentReplicas');
  t.true(answers.length >= 8);
  t.deepEqual([...new Set(answers)], [200], 'no request dropped or failed while scaling');

  // No load: down to the minimum of one running replica after the delay, then to zero after the idle period.
  const down = await deploymentWhen(kiln, tenant.key, id, (d) => d.currentReplicas === 1 && d.status === 'running', 'scaled down after the load', 120_000);
  t.is(down.maxReplicas, 3);
  // What runs is what Kiln shows and bills: one replica (the count asked for is 0; three ran a moment ago), and
  // a cost per million tokens from the last hour's measured cost and tokens, the load having made enough of them.
  const [pricing, usage] = await Promise.all([
    kiln.request('GET', `/v1/deployments/${id}/pricing?orgId=${tenant.organizationId}`, { token: tenant.key }),
    kiln.request('GET', '/api/billing/usage', { token: tenant.token }), // the owner: the key may manage deployments alone
  ]);
  t.like(pricing.body, { replicas: 1, hourlyCents: 80 });
  t.is(usage.body.data.projection.hourlyRateCents, pricing.body.hourlyCents);
  t.true(pricing.body.throughput.generationTokens >= 1000, JSON.stringify(pricing.body.throughput));
  t.true(pricing.body.throughput.costPerMillionTokensCents > 0, JSON.stringify(pricing.body));
  t.is(pricing.body.throughput.note, null);
  const quietSince = Date.now();
  await deploymentWhen(kiln, tenant.key, id, (d) => d.status === 'scaled_to_zero' && d.currentReplicas === 0, 'scaled to zero when idle', 120_000);
  t.true(Date.now() - quietSince >= 5_000);

  // Each scale was a deployment.scaled event, with the autoscaler's reason.
  const inspected = await kiln.request('GET', `/v1/recovery/deployments/${id}`, { token: tenant.token });
  t.is(inspected.status, 200);
  const scaled = (inspected.body.events as Array<{ type: string }>).filter((e) => e.type === 'deployment.scaled');
  t.true(scaled.length >= 4, `wake, up, down, zero: ${scaled.length} scale events`);

  // And it wakes again.
  await sleep(500);
  const again = await infer(chat(id));
  t.is(again.status, 200);
});
