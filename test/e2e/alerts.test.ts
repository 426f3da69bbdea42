// Alerts and budgets end to end, with Kiln as processes, the local cluster's simulated model servers and a
// Prometheus scraping them every second: load through Kiln's inference route makes a latency rule fire, and
// its end resolves it, each edge delivered signed to the organization's alert channel; a budget at its hard
// limit stops the organization's deployment and refuses new ones with 402 naming it.
import anyTest, { type TestFn } from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { eventually } from '../support/eventually.ts';
import { deploymentWhen, newTenant, startKiln, type Kiln } from '../support/kiln.ts';

interface Context {
  kiln: Kiln;
  tenant: Awaited<ReturnType<typeof newTenant>>;
  receiver: Server;
  delivered: Array<{ event: string; data: { id: string; ruleId: string | null } }>;
  deploymentId: string;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  // Rules are evaluated each second here (the worker reads it from the environment startKiln passes on).
  process.env.KILN_ALERT_INTERVAL_SECONDS = '1';
  const kiln = await startKiln(import.meta.filename, { nodePools: [{ gpuType: 'nvidia-l4', nodes: 2, gpusPerNode: 1 }] });
  t.context = { kiln } as Context; // stopped by the after hook even if the rest of this set-up fails
  const tenant = await newTenant(kiln, 'alerts', 'full_access');
  const delivered: Context['delivered'] = [];
  const signing: { verifier?: Webhook } = {};
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      try {
        delivered.push(signing.verifier!.verify(body, req.headers as Record<string, string>) as Context['delivered'][number]);
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const channel = await kiln.request('POST', '/v1/monitoring/webhooks', {
    token: tenant.key, body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts` },
  });
  if (channel.status !== 201) throw new Error(`alert channel: ${channel.status} ${JSON.stringify(channel.body)}`);
  signing.verifier = new Webhook(channel.body.secret);
  const created = await kiln.request('POST', '/api/deployments', {
    token: tenant.key, body: { name: 'chat', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' },
  });
  if (created.status !== 201) throw new Error(`deployment: ${created.status} ${JSON.stringify(created.body)}`);
  await deploymentWhen(kiln, tenant.key, created.body.data.id, (d) => d.status === 'running', 'chat running', 240_000);
  t.context = { kiln, tenant, receiver, delivered, deploymentId: created.body.data.id };
});
test.after.always(async (t) => {
  t.context.receiver?.close();
  await t.context.kiln?.stop();
});

test.serial('a latency rule fires under load through Kiln\'s inference route and resolves after it; both edges reach the alert channel, signed, once', async (t) => {
  const { kiln, tenant, deploymentId, delivered } = t.context;
  // The simulator answers a token each 10 ms after 50 ms: 40 tokens take about 0.45 s end to end.
  const rule = await kiln.request('POST', '/v1/alerts', {
    token: tenant.key, body: { name: 'chat is slow', metric: 'latency', quantile: 'p95', threshold: 0.3, forSeconds: 2, deploymentId },
  });
  t.is(rule.status, 201, JSON.stringify(rule.body));
  const alerts = () => kiln.request('GET', `/v1/monitoring/alerts?orgId=${tenant.organizationId}`, { token: tenant.key });

  let loading = true;
  const statuses: number[] = [];
  const load = (async () => {
    while (loading) {
      const round = await Promise.all(Array.from({ length: 4 }, () => kiln.request('POST', '/v1/inference', {
        token: tenant.key, body: { deployment: 'chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 40 },
      })));
      statuses.push(...round.map((r) => r.status));
    }
  })();
  const firing = await eventually('the latency rule firing', async () => {
    const res = await alerts();
    return res.body.find((a: { ruleId: string; state: string }) => a.ruleId === rule.body.id && a.state === 'firing');
  }, 120_000).finally(() => { loading = false; });
  await load;
  t.true(statuses.length > 0 && statuses.every((s) => s === 200));
  t.true(firing.value > 0.3, `p95 ${firing.value} s`);
  t.regex(firing.message, /chat is slow: latency/);

  // No more requests: once the window holds none, there is no latency to compare, and the alert resolves.
  const resolved = await eventually('the alert resolved', async () => {
    const res = await alerts();
    return res.body.find((a: { id: string; state: string }) => a.id === firing.id && a.state === 'resolved');
  }, 120_000);
  t.truthy(resolved.resolvedAt);
  const rules = await kiln.request('GET', `/v1/alerts?orgId=${tenant.organizationId}`, { token: tenant.key });
  t.is(rules.body.find((r: { id: string }) => r.id === rule.body.id).state, 'ok');
  await eventually('both deliveries', async () => delivered.filter((d) => d.data.id === firing.id).length >= 2 || undefined, 60_000);
  t.deepEqual(delivered.filter((d) => d.data.id === firing.id).map((d) => d.event), ['alert.firing', 'alert.resolved']);
  const all = await alerts();
  t.is(all.body.filter((a: { ruleId: string }) => a.ruleId === rule.body.id).length, 1, 'one firing, recorded once');
});

test.serial('a budget at its hard limit stops the organization\'s deployment and refuses new ones with 402 naming it', async (t) => {
  const { kiln, tenant, deploymentId } = t.context;
  // One L4 replica costs 80 cents an hour: its first measured seconds reach a 1-cent daily limit.
  const budget = await kiln.request('POST', '/v1/cost-controls/alerts', { token: tenant.key, body: { name: 'hard limit', limitCents: 1, period: 'day', action: 'stop' } });
  t.is(budget.status, 201, JSON.stringify(budget.body));
  const reached = await eventually('the budget reached', async () => {
    const res = await kiln.request('GET', `/v1/cost-controls/alerts?orgId=${tenant.organizationId}`, { token: tenant.key });
    return res.body.find((b: { id: string; state: string }) => b.id === budget.body.id && b.state === 'firing');
  }, 60_000);
  t.true(reached.spentCents >= 1);

  const stopped = await deploymentWhen(kiln, tenant.key, deploymentId, (d) => d.status === 'stopped', 'chat stopped by the budget', 120_000);
  t.is(stopped.currentReplicas, 0);
  const refused = await kiln.request('POST', '/v1/deployments', {
    token: tenant.key, body: { name: 'another', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' },
  });
  t.is(refused.status, 402);
  t.is(refused.body.code, 'BUDGET_EXCEEDED');
  t.regex(refused.body.message, /hard limit/);
  const started = await kiln.request('POST', `/v1/deployments/${deploymentId}/actions`, { token: tenant.key, body: { action: 'start' } });
  t.is(started.status, 402, 'nor may it start again');
  const audit = await kiln.request('GET', `/v1/enterprise/audit?orgId=${tenant.organizationId}&resourceId=${deploymentId}&action=deployment.stop`, { token: tenant.token });
  t.true(JSON.stringify(audit.body).includes('system:alerts'), 'the stop is in the audit trail');
});
