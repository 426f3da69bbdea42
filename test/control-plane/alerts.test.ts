// Alerts and cost controls over HTTP: rules (/v1/alerts, /api/alerts), budgets (/v1/cost-controls/alerts),
// alerts (/v1/monitoring/alerts) and their delivery channels (/v1/monitoring/webhooks). Each row: success,
// bad input (400 missing or wrong type, 422 a broken rule naming the field), no credential, wrong scope,
// another organization's ids. A reached budget refuses new deployments and scale-ups with 402 naming it; a
// budget changed or deleted through /v1/alerts/{id} refuses by its new limit and action at once.
import test from 'ava';
import { addMember, createApiKey, signup, signupWithDeployment, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

const latencyRule = { name: 'chat p95', metric: 'latency', threshold: 2, forSeconds: 60 };
const budget = { name: 'monthly cap', limitCents: 5000, period: 'month' };
const channel = { url: 'https://hooks.example.com/alerts' };

test('POST /v1/alerts adds a rule with its defaults; GET /v1/alerts and /api/alerts list it; PUT changes it; DELETE removes it', async (t) => {
  const { token, organizationId } = await signup(api);
  const created = await api.request('POST', '/v1/alerts', { token, body: latencyRule });
  t.is(created.status, 201);
  t.like(created.body, { name: 'chat p95', metric: 'latency', threshold: 2, comparison: 'above', quantile: 'p95', forSeconds: 60, action: 'notify', enabled: true, state: 'ok', period: null });
  t.false('deploymentId' in created.body, 'a rule on the whole organization names no deployment');
  t.regex(created.body.id, /^alr_/);
  const listed = await api.request('GET', `/v1/alerts?orgId=${organizationId}`, { token });
  t.is(listed.status, 200);
  t.deepEqual(listed.body.map((r: { id: string }) => r.id), [created.body.id]);
  const platform = await api.request('GET', '/api/alerts', { token });
  t.is(platform.body.success, true);
  t.is(platform.body.data[0].id, created.body.id);
  const viaPlatform = await api.request('POST', '/api/alerts', { token, body: { name: 'failures', metric: 'deployment_failed' } });
  t.is(viaPlatform.status, 201);
  t.is(viaPlatform.body.data.threshold, null);

  const changed = await api.request('PUT', `/v1/alerts/${created.body.id}`, { token, body: { threshold: 1.5, quantile: 'p99', enabled: false } });
  t.is(changed.status, 200);
  t.like(changed.body, { threshold: 1.5, quantile: 'p99', enabled: false, name: 'chat p95' });
  const deleted = await api.request('DELETE', `/v1/alerts/${created.body.id}`, { token });
  t.deepEqual(deleted.body, { id: created.body.id, deleted: true });
  t.is((await api.request('DELETE', `/v1/alerts/${created.body.id}`, { token })).status, 404);
  t.is((await api.request('GET', `/v1/alerts?orgId=${organizationId}`, { token })).body.length, 1);
});

test('rules: missing or wrong types are 400, broken rules 422 naming the field', async (t) => {
  const { token } = await signup(api);
  for (const [body, field, status] of [
    [{ metric: 'latency', threshold: 1 }, 'name', 400],
    [{ ...latencyRule, threshold: 'high' }, 'threshold', 400],
    [{ ...latencyRule, forSeconds: 1.5 }, 'forSeconds', 400],
    [{ ...latencyRule, forSeconds: 100_000 }, 'forSeconds', 422],
    [{ ...latencyRule, metric: 'temperature' }, 'metric', 422],
    [{ name: 'no threshold', metric: 'latency' }, 'threshold', 422],
    [{ ...latencyRule, metric: 'error_rate', threshold: 5 }, 'threshold', 422],
    [{ ...latencyRule, action: 'stop' }, 'action', 422],
    [{ ...latencyRule, period: 'day' }, 'period', 422],
    [{ ...latencyRule, metric: 'queue', quantile: 'p99' }, 'quantile', 422],
    [{ name: 'spend', metric: 'spend', threshold: 100, comparison: 'below' }, 'comparison', 422],
  ] as const) {
    const res = await api.request('POST', '/v1/alerts', { token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(JSON.stringify(res.body).includes(field), `${field}: ${JSON.stringify(res.body)}`);
  }
  const rule = await api.request('POST', '/v1/alerts', { token, body: latencyRule });
  const broken = await api.request('PUT', `/v1/alerts/${rule.body.id}`, { token, body: { metric: 'error_rate', threshold: 3 } });
  t.is(broken.status, 422);
  t.true(JSON.stringify(broken.body).includes('threshold'));
  t.is((await api.request('PUT', `/v1/alerts/${rule.body.id}`, { token, body: { enabled: 'yes' } })).status, 400);
});

test('a rule on a deployment: its own is accepted, another organization\'s is 404', async (t) => {
  const owner = await signupWithDeployment(api);
  const other = await signup(api);
  const ok = await api.request('POST', '/v1/alerts', { token: owner.token, body: { ...latencyRule, deploymentId: owner.id } });
  t.is(ok.status, 201);
  t.is(ok.body.deploymentId, owner.id);
  const foreign = await api.request('POST', '/v1/alerts', { token: other.token, body: { ...latencyRule, deploymentId: owner.id } });
  t.is(foreign.status, 404);
  t.is((await api.request('PUT', `/v1/alerts/${ok.body.id}`, { token: other.token, body: { threshold: 1 } })).status, 404);
  t.is((await api.request('DELETE', `/v1/alerts/${ok.body.id}`, { token: other.token })).status, 404);
});

test('no credential is 401; read-only keys read but do not write; deployments-only keys do neither; another organization\'s orgId is 403', async (t) => {
  const { token, organizationId } = await signup(api);
  const other = await signup(api);
  const rows: Array<[string, string, unknown?]> = [
    ['GET', `/v1/alerts?orgId=${organizationId}`], ['POST', '/v1/alerts', latencyRule], ['PUT', '/v1/alerts/alr_x', { threshold: 1 }], ['DELETE', '/v1/alerts/alr_x'],
    ['GET', '/api/alerts'], ['POST', '/api/alerts', latencyRule],
    ['GET', `/v1/monitoring/alerts?orgId=${organizationId}`], ['POST', '/v1/monitoring/alerts', { name: 'drill' }], ['PUT', '/v1/monitoring/alerts', { id: 'alt_x', action: 'acknowledge' }],
    ['GET', `/v1/cost-controls/alerts?orgId=${organizationId}`], ['POST', '/v1/cost-controls/alerts', budget],
    ['GET', `/v1/monitoring/webhooks?orgId=${organizationId}`], ['POST', '/v1/monitoring/webhooks', channel], ['PUT', '/v1/monitoring/webhooks', { id: 'whs_x' }], ['DELETE', '/v1/monitoring/webhooks?id=whs_x'],
  ];
  const readOnly = await createApiKey(api, token, 'read_only');
  const deploymentsOnly = await createApiKey(api, token, 'deployments_only');
  for (const [method, path, body] of rows) {
    t.is((await api.request(method, path, { body })).status, 401, `${method} ${path}`);
    t.is((await api.request(method, path, { token: deploymentsOnly.key, body })).status, 403, `${method} ${path} deployments_only`);
    const asReader = await api.request(method, path, { token: readOnly.key, body });
    if (method === 'GET') t.is(asReader.status, 200, `${method} ${path} read_only`);
    else t.is(asReader.status, 403, `${method} ${path} read_only`);
    if (path.includes('orgId=')) t.is((await api.request(method, path, { token: other.token })).status, 403, `${method} ${path} another orgId`);
  }
  for (const path of ['/v1/alerts', '/v1/monitoring/alerts', '/v1/cost-controls/alerts', '/v1/monitoring/webhooks']) {
    const missing = await api.request('GET', path, { token });
    t.is(missing.status, 400, path);
  }
});

test('budgets: POST /v1/cost-controls/alerts adds one (refuse by default), GET lists budgets only; broken ones are 400 or 422', async (t) => {
  const { token, organizationId } = await signup(api);
  await api.request('POST', '/v1/alerts', { token, body: latencyRule });
  const created = await api.request('POST', '/v1/cost-controls/alerts', { token, body: budget });
  t.is(created.status, 201);
  t.like(created.body, { name: 'monthly cap', limitCents: 5000, period: 'month', basis: 'actual', action: 'refuse', state: 'ok', spentCents: null });
  const listed = await api.request('GET', `/v1/cost-controls/alerts?orgId=${organizationId}`, { token });
  t.deepEqual(listed.body.map((b: { id: string }) => b.id), [created.body.id]);
  // A budget is a spend rule among the organization's rules.
  t.true((await api.request('GET', `/v1/alerts?orgId=${organizationId}`, { token })).body.some((r: { id: string; metric: string }) => r.id === created.body.id && r.metric === 'spend'));
  for (const [body, field, status] of [
    [{ name: 'x', period: 'month' }, 'limitCents', 400],
    [{ ...budget, limitCents: '5000' }, 'limitCents', 400],
    [{ ...budget, limitCents: 0 }, 'limitCents', 422],
    [{ ...budget, period: 'week' }, 'period', 422],
    [{ ...budget, action: 'explode' }, 'action', 422],
    [{ ...budget, deploymentId: 'dep_nothere' }, 'dep_nothere', 404],
  ] as const) {
    const res = await api.request('POST', '/v1/cost-controls/alerts', { token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(JSON.stringify(res.body).includes(field), `${field}: ${JSON.stringify(res.body)}`);
  }
});

test('a reached budget that refuses: new deployments and scale-ups are 402 BUDGET_EXCEEDED naming it; a notify budget refuses nothing', async (t) => {
  const owner = await signupWithDeployment(api);
  const notify = await api.request('POST', '/v1/cost-controls/alerts', { token: owner.token, body: { ...budget, name: 'heads-up', action: 'notify' } });
  await api.pool.query(`update alert_rule set state = 'firing', last_value = 6000 where id = $1`, [notify.body.id]);
  t.is((await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('second') })).status, 201);

  const cap = await api.request('POST', '/v1/cost-controls/alerts', { token: owner.token, body: { ...budget, name: 'hard cap', action: 'stop' } });
  // What the evaluation workflow writes when the spend reaches the limit.
  await api.pool.query(`update alert_rule set state = 'firing', last_value = 5100 where id = $1`, [cap.body.id]);
  const refused = await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('third') });
  t.is(refused.status, 402);
  t.is(refused.body.code, 'BUDGET_EXCEEDED');
  t.regex(refused.body.message, /hard cap/);
  const onPlatform = await api.request('POST', '/api/deployments', { token: owner.token, body: validDeployment('fourth') });
  t.is(onPlatform.status, 402);
  t.like(onPlatform.body.error.details.budget, { id: cap.body.id, name: 'hard cap', limitCents: 5000, spentCents: 5100 });
  // The dry run says so among its checks.
  const dryRun = await api.request('POST', '/v1/deployments/validate?preview=false', { token: owner.token, body: validDeployment('fifth') });
  t.is(dryRun.status, 200);
  t.false(dryRun.body.valid);
  const budgetCheck = dryRun.body.checks.find((c: { check: string }) => c.check === 'budget');
  t.false(budgetCheck.passed);
  t.regex(budgetCheck.reason, /Budget hard cap .* is reached/);
  const scaleUp = await api.request('PATCH', `/api/deployments/${owner.id}`, { token: owner.token, body: { replicas: 2, maxReplicas: 3 } });
  t.is(scaleUp.status, 402, JSON.stringify(scaleUp.body));
  // Stopping is still allowed.
  t.is((await api.request('POST', `/v1/deployments/${owner.id}/actions`, { token: owner.token, body: { action: 'stop' } })).status, 200);
  // Another organization is not held by it.
  const other = await signup(api);
  t.is((await api.request('POST', '/v1/deployments', { token: other.token, body: validDeployment() })).status, 201);
});

test('a budget is changed and deleted as a rule (PUT, DELETE /v1/alerts/{id}): the guard refuses by its new limit and action', async (t) => {
  const owner = await signupWithDeployment(api);
  const cap = await api.request('POST', '/v1/cost-controls/alerts', { token: owner.token, body: { ...budget, name: 'hard cap' } });
  // What the evaluation workflow writes when the spend reaches the limit.
  await api.pool.query(`update alert_rule set state = 'firing', last_value = 5100 where id = $1`, [cap.body.id]);
  const deploy = (name: string) => api.request('POST', '/api/deployments', { token: owner.token, body: validDeployment(name) });
  t.is((await deploy('refused')).status, 402);

  // Raised, but not past the spend last measured: still reached, now at its new limit.
  const stillBelow = await api.request('PUT', `/v1/alerts/${cap.body.id}`, { token: owner.token, body: { threshold: 5050 } });
  t.is(stillBelow.status, 200);
  t.like(stillBelow.body, { metric: 'spend', threshold: 5050, state: 'firing', action: 'refuse', period: 'month' });
  const refused = await deploy('still-refused');
  t.is(refused.status, 402);
  t.like(refused.body.error.details.budget, { id: cap.body.id, limitCents: 5050, spentCents: 5100 });

  // Raised past it: no longer reached, deployments are allowed at once.
  const raised = await api.request('PUT', `/v1/alerts/${cap.body.id}`, { token: owner.token, body: { threshold: 10_000, period: 'day', action: 'stop', name: 'daily cap' } });
  t.is(raised.status, 200);
  t.like(raised.body, { name: 'daily cap', threshold: 10_000, period: 'day', action: 'stop', state: 'ok' });
  t.is((await deploy('allowed')).status, 201);
  const [listed] = (await api.request('GET', `/v1/cost-controls/alerts?orgId=${owner.organizationId}`, { token: owner.token })).body;
  t.like(listed, { id: cap.body.id, name: 'daily cap', limitCents: 10_000, period: 'day', basis: 'actual', action: 'stop', state: 'ok' });

  // Reached again, then turned to alerting only: nothing is refused.
  await api.pool.query(`update alert_rule set state = 'firing', last_value = 12000 where id = $1`, [cap.body.id]);
  t.is((await deploy('stopped-cap')).status, 402);
  t.like((await api.request('PUT', `/v1/alerts/${cap.body.id}`, { token: owner.token, body: { action: 'notify' } })).body, { action: 'notify', state: 'firing' });
  t.is((await deploy('notify-only')).status, 201);

  // Deleted while reached by a refusing budget: what it refused is allowed again, and it is listed no more.
  await api.request('PUT', `/v1/alerts/${cap.body.id}`, { token: owner.token, body: { action: 'refuse' } });
  t.is((await deploy('refused-again')).status, 402);
  t.deepEqual((await api.request('DELETE', `/v1/alerts/${cap.body.id}`, { token: owner.token })).body, { id: cap.body.id, deleted: true });
  t.is((await deploy('after-delete')).status, 201);
  t.deepEqual((await api.request('GET', `/v1/cost-controls/alerts?orgId=${owner.organizationId}`, { token: owner.token })).body, []);
});

test('changing a budget: a limit that is no whole number of cents or a rule no budget keeps is 422, a wrong type 400; viewers 403; another organization\'s 404', async (t) => {
  const { token, organizationId } = await signup(api);
  const created = await api.request('POST', '/v1/cost-controls/alerts', { token, body: budget });
  const id = created.body.id as string;
  for (const [body, field, status] of [
    [{ threshold: 12.5 }, 'threshold', 422],
    [{ threshold: 0 }, 'threshold', 422],
    [{ threshold: 'lots' }, 'threshold', 400],
    [{ period: 'week' }, 'period', 422],
    [{ action: 'explode' }, 'action', 422],
    [{ comparison: 'below' }, 'comparison', 422],
    [{ quantile: 'p99' }, 'quantile', 422],
    [{ deploymentId: 'dep_nothere' }, 'dep_nothere', 404],
  ] as const) {
    const res = await api.request('PUT', `/v1/alerts/${id}`, { token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(JSON.stringify(res.body).includes(field), `${field}: ${JSON.stringify(res.body)}`);
  }
  const unchanged = { id, limitCents: 5000, period: 'month', action: 'refuse' };
  const read = async (as = token) => (await api.request('GET', `/v1/cost-controls/alerts?orgId=${organizationId}`, { token: as })).body[0];
  t.like(await read(), unchanged, 'a refused change changes nothing');

  const viewer = await addMember(api, organizationId, 'viewer');
  t.is((await api.request('PUT', `/v1/alerts/${id}`, { ...viewer.as, body: { threshold: 9000 } })).status, 403);
  t.is((await api.request('DELETE', `/v1/alerts/${id}`, viewer.as)).status, 403);
  const other = await signup(api);
  t.is((await api.request('PUT', `/v1/alerts/${id}`, { token: other.token, body: { threshold: 9000 } })).status, 404);
  t.is((await api.request('DELETE', `/v1/alerts/${id}`, { token: other.token })).status, 404);
  t.like(await read(), unchanged);
  t.is((await api.request('PUT', '/v1/alerts/alr_unknown', { token, body: { threshold: 9000 } })).status, 404);
});

test('GET /v1/monitoring/alerts lists firing and recent alerts; POST raises one by hand; PUT acknowledges, silences and resolves', async (t) => {
  const { token, organizationId, userId } = await signup(api);
  const other = await signup(api);
  const raised = await api.request('POST', '/v1/monitoring/alerts', { token, body: { name: 'drill', message: 'a fire drill' } });
  t.is(raised.status, 201);
  t.like(raised.body, { name: 'drill', message: 'a fire drill', state: 'firing', ruleId: null, resolvedAt: null });
  const events = await api.pool.query('select type, payload from alert_event where alert_id = $1', [raised.body.id]);
  t.deepEqual(events.rows.map((r) => r.type), ['alert.firing']);
  t.is(events.rows[0].payload.data.id, raised.body.id);

  const listed = await api.request('GET', `/v1/monitoring/alerts?orgId=${organizationId}&state=firing`, { token });
  t.deepEqual(listed.body.map((a: { id: string }) => a.id), [raised.body.id]);
  t.is((await api.request('GET', `/v1/monitoring/alerts?orgId=${organizationId}&state=gone`, { token })).status, 400);

  const acknowledged = await api.request('PUT', '/v1/monitoring/alerts', { token, body: { id: raised.body.id, action: 'acknowledge' } });
  t.is(acknowledged.status, 200);
  t.is(acknowledged.body.acknowledgedBy, userId);
  const until = new Date(Date.now() + 3_600_000).toISOString();
  const silenced = await api.request('PUT', '/v1/monitoring/alerts', { token, body: { id: raised.body.id, action: 'silence', until } });
  t.is(silenced.body.silencedUntil, until);
  for (const [body, field, status] of [
    [{ id: raised.body.id, action: 'silence' }, 'until', 422],
    [{ id: raised.body.id, action: 'silence', until: '2001-01-01T00:00:00Z' }, 'until', 422],
    [{ id: raised.body.id, action: 'snooze' }, 'action', 422],
    [{ action: 'acknowledge' }, 'id', 400],
    [{ id: raised.body.id, action: 'silence', until: 'tomorrow' }, 'until', 422],
  ] as const) {
    const res = await api.request('PUT', '/v1/monitoring/alerts', { token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(JSON.stringify(res.body).includes(field));
  }
  t.is((await api.request('PUT', '/v1/monitoring/alerts', { token: other.token, body: { id: raised.body.id, action: 'acknowledge' } })).status, 404);
  t.is((await api.request('POST', '/v1/monitoring/alerts', { token, body: { message: 'no name' } })).status, 400);

  const resolved = await api.request('PUT', '/v1/monitoring/alerts', { token, body: { id: raised.body.id, action: 'resolve' } });
  t.is(resolved.body.state, 'resolved');
  await api.request('PUT', '/v1/monitoring/alerts', { token, body: { id: raised.body.id, action: 'resolve' } });
  const after = await api.pool.query('select type from alert_event where alert_id = $1 order by created_at', [raised.body.id]);
  t.deepEqual(after.rows.map((r) => r.type), ['alert.firing', 'alert.resolved'], 'each edge recorded once');
  t.is((await api.request('GET', `/v1/monitoring/alerts?orgId=${organizationId}&state=resolved`, { token })).body.length, 1);
  t.deepEqual((await api.request('GET', `/v1/monitoring/alerts?orgId=${other.organizationId}`, { token: other.token })).body, []);
});

test('/v1/monitoring/webhooks: alert channels are subscriptions to alert events, listed, changed and removed; others\' are 404', async (t) => {
  const { token, organizationId } = await signup(api);
  const other = await signup(api);
  const deploymentHook = await api.request('POST', '/api/webhooks', { token, body: { url: 'https://hooks.example.com/deployments', events: ['deployment.running'] } });
  const created = await api.request('POST', '/v1/monitoring/webhooks', { token, body: channel });
  t.is(created.status, 201);
  t.deepEqual(created.body.events, ['alert.firing', 'alert.resolved']);
  t.regex(created.body.secret, /^whsec_/);
  const listed = await api.request('GET', `/v1/monitoring/webhooks?orgId=${organizationId}`, { token });
  t.deepEqual(listed.body.map((w: { id: string }) => w.id), [created.body.id]);
  t.false('secret' in listed.body[0]);

  const changed = await api.request('PUT', '/v1/monitoring/webhooks', { token, body: { id: created.body.id, events: ['alert.firing'], url: 'https://hooks.example.com/other' } });
  t.like(changed.body, { events: ['alert.firing'], url: 'https://hooks.example.com/other' });
  for (const [method, path, body, status] of [
    ['POST', '/v1/monitoring/webhooks', { url: 'ftp://x.example.com' }, 422],
    ['POST', '/v1/monitoring/webhooks', { ...channel, events: ['deployment.running'] }, 422],
    ['POST', '/v1/monitoring/webhooks', { events: ['alert.firing'] }, 400],
    ['PUT', '/v1/monitoring/webhooks', { id: created.body.id, events: [] }, 422],
    ['PUT', '/v1/monitoring/webhooks', { url: channel.url }, 400],
    ['DELETE', '/v1/monitoring/webhooks', undefined, 400],
    // A deployment-event subscription is no alert channel; another organization's channel is not found.
    ['PUT', '/v1/monitoring/webhooks', { id: deploymentHook.body.data.id, url: channel.url }, 404],
    ['DELETE', `/v1/monitoring/webhooks?id=${deploymentHook.body.data.id}`, undefined, 404],
  ] as const) {
    t.is((await api.request(method, path, { token, body })).status, status, `${method} ${path} ${JSON.stringify(body)}`);
  }
  t.is((await api.request('PUT', '/v1/monitoring/webhooks', { token: other.token, body: { id: created.body.id, url: channel.url } })).status, 404);
  t.is((await api.request('DELETE', `/v1/monitoring/webhooks?id=${created.body.id}`, { token: other.token })).status, 404);
  const removed = await api.request('DELETE', `/v1/monitoring/webhooks?id=${created.body.id}`, { token });
  t.deepEqual(removed.body, { id: created.body.id, deleted: true });
  t.deepEqual((await api.request('GET', `/v1/monitoring/webhooks?orgId=${organizationId}`, { token })).body, []);
});
