// /v1/admin/feature-flags and the helper the rest of Kiln reads flags through (feature-flags/flags.ts).
import test from 'ava';
import { createFeatureFlags, rolloutBucket } from '../../control-plane/feature-flags/flags.ts';
import { startAdminApi, type Admin } from '../support/admin.ts';
import { createApiKey, signup, type TestApi, validDeployment } from '../support/control-plane.ts';

let api: TestApi;
let admin: Admin;
test.before(async () => { ({ api, admin } = await startAdminApi(import.meta.filename)); });
test.after.always(() => api?.close());

const stored = async (...keys: string[]) => (await api.pool.query('SELECT key FROM feature_flag WHERE key = ANY($1)', [keys])).rows.map((r) => r.key as string);

test('an administrator creates, lists, changes and deletes a flag', async (t) => {
  const { organizationId } = await signup(api, 'customer');
  const created = await api.request('POST', '/v1/admin/feature-flags', {
    token: admin.token, body: { key: 'crud-flag', description: 'New scheduler', rolloutPercent: 10, overrides: { [organizationId]: true } },
  });
  t.is(created.status, 201);
  t.like(created.body, { key: 'crud-flag', description: 'New scheduler', enabled: false, rolloutPercent: 10, overrides: { [organizationId]: true } });
  t.regex(created.body.id, /^ffl_/);

  const listed = await api.request('GET', '/v1/admin/feature-flags', { token: admin.token });
  t.is(listed.status, 200);
  t.deepEqual(listed.body.find((f: { key: string }) => f.key === 'crud-flag'), created.body);

  const other = await signup(api, 'other');
  const patched = await api.request('PATCH', `/v1/admin/feature-flags/${created.body.id}`, {
    token: admin.token, body: { enabled: true, overrides: { [organizationId]: null, [other.organizationId]: false } },
  });
  t.is(patched.status, 200);
  t.like(patched.body, { enabled: true, rolloutPercent: 10, description: 'New scheduler', overrides: { [other.organizationId]: false } });
  t.deepEqual(Object.keys(patched.body.overrides), [other.organizationId], 'null removed the first override, the second was merged in');

  const deleted = await api.request('DELETE', `/v1/admin/feature-flags/${created.body.id}`, { token: admin.token });
  t.deepEqual({ status: deleted.status, body: deleted.body }, { status: 200, body: { id: created.body.id, deleted: true } });
  t.is((await api.request('PATCH', `/v1/admin/feature-flags/${created.body.id}`, { token: admin.token, body: { enabled: false } })).status, 404);
  t.is((await api.request('DELETE', `/v1/admin/feature-flags/${created.body.id}`, { token: admin.token })).status, 404);
});

test('bad flags are 400 (wrong type, unknown field) or 422 (broken rule, unknown organization) and store nothing', async (t) => {
  await api.request('POST', '/v1/admin/feature-flags', { token: admin.token, body: { key: 'taken-flag', description: 'first' } });
  for (const [body, status, field] of [
    [{ key: 'Bad Key!' }, 422, 'key'],
    [{ key: 'pct-flag', rolloutPercent: 101 }, 422, 'rolloutPercent'],
    [{ key: 'pct-flag', rolloutPercent: 1.5 }, 400, 'rolloutPercent'],
    [{ key: 'org-flag', overrides: { org_doesnotexist0000000: true } }, 422, 'overrides.org_doesnotexist0000000'],
    [{ key: 'type-flag', enabled: 'yes' }, 400, 'enabled'],
    [{ description: 'no key' }, 400, 'key'],
    [{ key: 'extra-flag', colour: 'red' }, 400, 'body'],
  ] as const) {
    const res = await api.request('POST', '/v1/admin/feature-flags', { token: admin.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.includes(field), `${JSON.stringify(body)}: ${res.body.message}`);
  }
  const conflict = await api.request('POST', '/v1/admin/feature-flags', { token: admin.token, body: { key: 'taken-flag', description: 'second' } });
  t.is(conflict.status, 409);
  t.deepEqual(await stored('pct-flag', 'org-flag', 'type-flag', 'extra-flag'), []);
  t.is((await api.pool.query(`SELECT description FROM feature_flag WHERE key = 'taken-flag'`)).rows[0].description, 'first');

  const flag = (await api.request('GET', '/v1/admin/feature-flags', { token: admin.token })).body.find((f: { key: string }) => f.key === 'taken-flag');
  const bad = await api.request('PATCH', `/v1/admin/feature-flags/${flag.id}`, { token: admin.token, body: { rolloutPercent: -1 } });
  t.is(bad.status, 422);
  const unknownOrg = await api.request('PATCH', `/v1/admin/feature-flags/${flag.id}`, { token: admin.token, body: { overrides: { org_doesnotexist0000000: true } } });
  t.is(unknownOrg.status, 422);
  const renamed = await api.request('PATCH', `/v1/admin/feature-flags/${flag.id}`, { token: admin.token, body: { key: 'other' } });
  t.is(renamed.status, 400, 'the key is fixed at creation');
  t.deepEqual((await api.request('GET', '/v1/admin/feature-flags', { token: admin.token })).body.find((f: { key: string }) => f.key === 'taken-flag'), flag);
});

test('only platform administrators: no credential 401, an organization owner 403, an admin\'s read-only key reads but cannot write', async (t) => {
  const owner = await signup(api, 'owner');
  const created = await api.request('POST', '/v1/admin/feature-flags', { token: admin.token, body: { key: 'guarded-flag' } });
  const readOnly = await createApiKey(api, admin.token, 'read_only');
  const calls = [
    ['GET', '/v1/admin/feature-flags', undefined],
    ['POST', '/v1/admin/feature-flags', { key: 'sneaky-flag' }],
    ['PATCH', `/v1/admin/feature-flags/${created.body.id}`, { enabled: true }],
    ['DELETE', `/v1/admin/feature-flags/${created.body.id}`, undefined],
  ] as const;
  for (const [method, path, body] of calls) {
    t.is((await api.request(method, path, { body })).status, 401, `${method} ${path} without credential`);
    t.is((await api.request(method, path, { token: owner.token, body })).status, 403, `${method} ${path} as an organization owner`);
    t.is((await api.request(method, path, { token: readOnly.key, body })).status, method === 'GET' ? 200 : 403, `${method} ${path} with a read-only key`);
  }
  t.deepEqual(await stored('sneaky-flag'), []);
  t.like((await api.request('GET', '/v1/admin/feature-flags', { token: admin.token })).body.find((f: { key: string }) => f.key === 'guarded-flag'), { enabled: false });
});

test('isEnabled: overrides win, then the default, then the rollout; an unknown flag is off; a cached answer lasts until invalidated', async (t) => {
  const flags = createFeatureFlags({ cacheMs: 60_000 });
  const em = api.orm.em.fork();
  const [a, b] = [await signup(api, 'a'), await signup(api, 'b')];
  t.false(await flags.isEnabled(em, 'no-such-flag', a.organizationId));

  const created = await api.request('POST', '/v1/admin/feature-flags', { token: admin.token, body: { key: 'helper-flag', overrides: { [a.organizationId]: true } } });
  t.true(await flags.isEnabled(em, 'helper-flag', a.organizationId));
  t.false(await flags.isEnabled(em, 'helper-flag', b.organizationId));

  // Another process's cache keeps its answer until it expires or is invalidated.
  await api.request('PATCH', `/v1/admin/feature-flags/${created.body.id}`, { token: admin.token, body: { enabled: true, overrides: { [a.organizationId]: false } } });
  t.false(await flags.isEnabled(em, 'helper-flag', b.organizationId), 'cached');
  flags.invalidate('helper-flag');
  t.true(await flags.isEnabled(em, 'helper-flag', b.organizationId));
  t.false(await flags.isEnabled(em, 'helper-flag', a.organizationId), 'the override still wins over enabled');
});

test('percentage rollout: about the share asked for, and an organization in at 10% stays in as the percentage grows', async (t) => {
  const organizations = Array.from({ length: 2_000 }, (_, i) => `org_${i.toString(36).padStart(20, '0')}`);
  const inAt = (percent: number) => new Set(organizations.filter((org) => rolloutBucket('rollout-flag', org) < percent));
  const ten = inAt(10);
  const fifty = inAt(50);
  t.true(ten.size > 150 && ten.size < 250, `10% picked ${ten.size} of 2000`);
  t.true(fifty.size > 900 && fifty.size < 1100, `50% picked ${fifty.size} of 2000`);
  for (const org of ten) t.true(fifty.has(org));
  t.is(inAt(100).size, organizations.length);
  t.is(inAt(0).size, 0);

  // Through the API and the helper, with real organizations.
  const orgs = await Promise.all(Array.from({ length: 6 }, (_, i) => signup(api, `rollout${i}`)));
  const created = await api.request('POST', '/v1/admin/feature-flags', { token: admin.token, body: { key: 'rollout-flag', rolloutPercent: 30 } });
  const flags = createFeatureFlags({ cacheMs: 0 });
  const em = api.orm.em.fork();
  const onAt = async () => new Set((await Promise.all(orgs.map(async (o) => (await flags.isEnabled(em, 'rollout-flag', o.organizationId)) && o.organizationId))).filter(Boolean));
  const at30 = await onAt();
  for (const o of orgs) t.is(at30.has(o.organizationId), rolloutBucket('rollout-flag', o.organizationId) < 30);
  await api.request('PATCH', `/v1/admin/feature-flags/${created.body.id}`, { token: admin.token, body: { rolloutPercent: 80 } });
  const at80 = await onAt();
  for (const org of at30) t.true(at80.has(org));
});

test('the deployments.paused flag refuses new deployments of the organizations it is on for, and lifting it lets them through', async (t) => {
  const paused = await signup(api, 'paused-org');
  const running = await signup(api, 'running-org');
  const flag = await api.request('POST', '/v1/admin/feature-flags', {
    token: admin.token, body: { key: 'deployments.paused', description: 'Maintenance of the L4 fleet', overrides: { [paused.organizationId]: true } },
  });
  t.is(flag.status, 201);

  const refused = await api.request('POST', '/api/deployments', { token: paused.token, body: validDeployment('during') });
  t.is(refused.status, 503);
  t.like(refused.body.error, { code: 'SERVICE_UNAVAILABLE', details: { flag: 'deployments.paused' } });
  t.regex(refused.body.error.message, /paused for maintenance/);
  t.is(Number((await api.pool.query('SELECT count(*) FROM deployment WHERE organization_id = $1', [paused.organizationId])).rows[0].count), 0);
  t.is((await api.request('POST', '/api/deployments', { token: running.token, body: validDeployment('during') })).status, 201, 'other organizations are not paused');

  t.is((await api.request('PATCH', `/v1/admin/feature-flags/${flag.body.id}`, { token: admin.token, body: { overrides: { [paused.organizationId]: null } } })).status, 200);
  t.is((await api.request('POST', '/api/deployments', { token: paused.token, body: validDeployment('after') })).status, 201);
});
