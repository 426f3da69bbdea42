// Custom roles and role assignments: /v1/enterprise/roles and /v1/enterprise/assignments.
import test from 'ava';
import { ROLE_PERMISSIONS } from '../../control-plane/core/permissions.ts';
import { addMember, createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

const auditor = { name: 'Auditor', description: 'Reads deployments and the audit trail', permissions: ['audit:read', 'deployments:read', 'roles:read'] };

async function createRole(token: string, body: object = auditor) {
  const res = await api.request('POST', '/v1/enterprise/roles', { token, body });
  if (res.status !== 201) throw new Error(`role creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; name: string; permissions: string[] };
}

/** The name signup() gives: "<label> <n>", where the e-mail is "<label>-<n>-...". */
const signupName = (user: { email: string }) => user.email.replace(/^(\w+)-(\d+)-.*$/, '$1 $2');
const customRoles = async (token: string) => (await api.request('GET', '/v1/enterprise/roles', { token })).body.filter((r: { builtIn: boolean }) => !r.builtIn);
const roleOf = async (token: string, userId: string) =>
  (await api.request('GET', '/v1/enterprise/assignments', { token })).body.find((a: { userId: string }) => a.userId === userId)?.roleId;

test('GET /v1/enterprise/roles lists the four built-in roles with the permission table\'s permissions, read-only', async (t) => {
  const { token } = await signup(api);
  const res = await api.request('GET', '/v1/enterprise/roles', { token });
  t.is(res.status, 200);
  t.deepEqual(res.body.map((r: { id: string }) => r.id), ['owner', 'admin', 'member', 'viewer']);
  for (const role of res.body) {
    t.true(role.builtIn);
    t.is(role.name, role.id);
    t.deepEqual(role.permissions, ROLE_PERMISSIONS[role.id as keyof typeof ROLE_PERMISSIONS]);
    t.false(role.permissions.some((p: string) => p.startsWith('admin:')));
  }
});

test('POST creates a custom role (permissions once each, in table order); PUT replaces it; DELETE removes it', async (t) => {
  const { token } = await signup(api);
  const created = await api.request('POST', '/v1/enterprise/roles', { token, body: { ...auditor, permissions: ['roles:read', 'deployments:read', 'audit:read', 'roles:read'] } });
  t.is(created.status, 201);
  t.regex(created.body.id, /^role_[0-9a-z]{20}$/);
  t.deepEqual(created.body, { id: created.body.id, name: 'Auditor', description: auditor.description, builtIn: false, permissions: ['deployments:read', 'roles:read', 'audit:read'] });
  t.deepEqual(await customRoles(token), [created.body]);

  const replaced = await api.request('PUT', `/v1/enterprise/roles/${created.body.id}`, { token, body: { name: 'Deployer', permissions: ['deployments:write', 'deployments:read'] } });
  t.is(replaced.status, 200);
  t.deepEqual(replaced.body, { id: created.body.id, name: 'Deployer', description: null, builtIn: false, permissions: ['deployments:read', 'deployments:write'] });
  t.deepEqual(await customRoles(token), [replaced.body]);

  const deleted = await api.request('DELETE', `/v1/enterprise/roles/${created.body.id}`, { token });
  t.is(deleted.status, 200);
  t.deepEqual(deleted.body, { id: created.body.id, deleted: true });
  t.deepEqual(await customRoles(token), []);
  t.is((await api.request('DELETE', `/v1/enterprise/roles/${created.body.id}`, { token })).status, 404);
});

test('a member holding a custom role may do exactly what it lists, and a change to the role applies at once', async (t) => {
  const owner = await signup(api);
  const role = await createRole(owner.token);
  const member = await addMember(api, owner.organizationId, role.id);
  t.is((await api.request('GET', '/api/deployments', member.as)).status, 200);
  t.is((await api.request('GET', '/v1/enterprise/roles', member.as)).status, 200);
  t.is((await api.request('POST', '/api/deployments', { ...member.as, body: {} })).status, 403);
  t.is((await api.request('GET', `/v1/settings/api-keys?orgId=${owner.organizationId}`, member.as)).status, 403);
  t.is((await api.request('GET', '/api/webhooks', member.as)).status, 403);

  await api.request('PUT', `/v1/enterprise/roles/${role.id}`, { token: owner.token, body: { ...auditor, permissions: [...auditor.permissions, 'webhooks:read'] } });
  t.is((await api.request('GET', '/api/webhooks', member.as)).status, 200);
});

test('bad roles are 400 (missing field, wrong type, unknown field) or 422 (broken rule) naming the field, and store nothing', async (t) => {
  const { token } = await signup(api);
  const existing = await createRole(token);
  for (const [body, field, status] of [
    [{ ...auditor, permissions: ['deployments:destroy'] }, 'permissions', 422],
    [{ ...auditor, permissions: ['admin:read'] }, 'permissions', 422],
    [{ ...auditor, name: '   ' }, 'name', 422],
    [{ ...auditor, name: 'x'.repeat(65) }, 'name', 422],
    [{ ...auditor, name: 'Owner' }, 'name', 422],
    [{ ...auditor, description: 'x'.repeat(501) }, 'description', 422],
    [{ ...auditor, permissions: 'audit:read' }, 'permissions', 400],
    [{ ...auditor, name: 42 }, 'name', 400],
    [{ name: 'No permissions' }, 'permissions', 400],
    [{ ...auditor, level: 3 }, 'level', 400],
  ] as const) {
    for (const [method, path] of [['POST', '/v1/enterprise/roles'], ['PUT', `/v1/enterprise/roles/${existing.id}`]]) {
      const res = await api.request(method!, path!, { token, body });
      t.is(res.status, status, `${method} ${JSON.stringify(body)}`);
      t.regex(res.body.message, new RegExp(field), JSON.stringify(body));
    }
  }
  t.deepEqual(await customRoles(token), [{ ...existing, description: auditor.description, builtIn: false }]);
});

test('malformed role and user ids in the path or query are 400 naming the parameter', async (t) => {
  const { token } = await signup(api);
  const long = 'role_' + 'x'.repeat(60);
  for (const [method, path, body, parameter] of [
    ['PUT', `/v1/enterprise/roles/${long}`, auditor, 'id'],
    ['DELETE', `/v1/enterprise/roles/${long}`, undefined, 'id'],
    ['GET', `/v1/enterprise/assignments?roleId=${long}`, undefined, 'roleId'],
    ['DELETE', `/v1/enterprise/assignments?userId=usr_${'x'.repeat(61)}`, undefined, 'userId'],
  ] as const) {
    const res = await api.request(method, path, { token, body });
    t.is(res.status, 400, `${method} ${path}`);
    t.regex(res.body.message, new RegExp(`parameter ${parameter}`));
  }
});

test('a second role of the same name (whatever its case) is 409; another organization may use the name', async (t) => {
  const { token } = await signup(api);
  const first = await createRole(token);
  const duplicate = await api.request('POST', '/v1/enterprise/roles', { token, body: { ...auditor, name: 'AUDITOR' } });
  t.is(duplicate.status, 409);
  t.is(duplicate.body.code, 'RESOURCE_EXISTS');
  const other = await createRole(token, { ...auditor, name: 'Other' });
  t.is((await api.request('PUT', `/v1/enterprise/roles/${other.id}`, { token, body: { ...auditor, name: 'auditor' } })).status, 409);
  t.is((await customRoles(token)).length, 2);
  t.is((await customRoles(token)).find((r: { id: string }) => r.id === first.id).name, 'Auditor');
  t.is((await api.request('POST', '/v1/enterprise/roles', { token: (await signup(api)).token, body: auditor })).status, 201);
});

test('built-in roles are read-only: PUT and DELETE on them are 422 and change nothing', async (t) => {
  const { token } = await signup(api);
  for (const id of ['owner', 'admin', 'member', 'viewer']) {
    const put = await api.request('PUT', `/v1/enterprise/roles/${id}`, { token, body: auditor });
    t.is(put.status, 422, id);
    t.is(put.body.code, 'VALIDATION_ERROR');
    t.is(put.body.message, `Invalid path parameter id: ${id} is a built-in role and cannot be changed`);
    t.is((await api.request('DELETE', `/v1/enterprise/roles/${id}`, { token })).status, 422, id);
  }
  const roles = (await api.request('GET', '/v1/enterprise/roles', { token })).body;
  t.deepEqual(roles.map((r: { id: string; permissions: string[] }) => [r.id, r.permissions]), Object.entries(ROLE_PERMISSIONS));
});

test('a role some member holds cannot be deleted (409 RESOURCE_IN_USE) until they hold another', async (t) => {
  const owner = await signup(api);
  const role = await createRole(owner.token);
  const member = await addMember(api, owner.organizationId, role.id);
  const refused = await api.request('DELETE', `/v1/enterprise/roles/${role.id}`, { token: owner.token });
  t.is(refused.status, 409);
  t.is(refused.body.code, 'RESOURCE_IN_USE');
  t.is(refused.body.message, 'Role Auditor is held by a member: assign them another role first');
  t.is((await customRoles(owner.token)).length, 1);
  t.is((await api.request('GET', '/api/deployments', member.as)).status, 200);

  t.is((await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body: { userId: member.userId, roleId: 'viewer' } })).status, 200);
  t.is((await api.request('DELETE', `/v1/enterprise/roles/${role.id}`, { token: owner.token })).status, 200);
});

test('GET /v1/enterprise/assignments lists every member with their role; ?roleId= narrows it', async (t) => {
  const owner = await signup(api);
  const role = await createRole(owner.token);
  const viewer = await addMember(api, owner.organizationId, 'viewer');
  const custom = await addMember(api, owner.organizationId, role.id);
  const res = await api.request('GET', '/v1/enterprise/assignments', { token: owner.token });
  t.is(res.status, 200);
  // Members in the order they joined.
  t.deepEqual(res.body, [
    { userId: owner.userId, email: owner.email, name: signupName(owner), roleId: 'owner', roleName: 'owner' },
    { userId: viewer.userId, email: viewer.email, name: signupName(viewer), roleId: 'viewer', roleName: 'viewer' },
    { userId: custom.userId, email: custom.email, name: signupName(custom), roleId: role.id, roleName: 'Auditor' },
  ]);
  const narrowed = await api.request('GET', `/v1/enterprise/assignments?roleId=${role.id}`, { token: owner.token });
  t.deepEqual(narrowed.body.map((a: { userId: string }) => a.userId), [custom.userId]);
  t.deepEqual((await api.request('GET', '/v1/enterprise/assignments?roleId=admin', { token: owner.token })).body, []);
  const unknown = await api.request('GET', '/v1/enterprise/assignments?roleId=role_unknown', { token: owner.token });
  t.is(unknown.status, 404);
});

test('POST /v1/enterprise/assignments gives a member a built-in or custom role in place of theirs', async (t) => {
  const owner = await signup(api);
  const role = await createRole(owner.token);
  const member = await addMember(api, owner.organizationId, 'viewer');
  t.is((await api.request('GET', `/v1/settings/api-keys?orgId=${owner.organizationId}`, member.as)).status, 403);

  const toAdmin = await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body: { userId: member.userId, roleId: 'admin' } });
  t.is(toAdmin.status, 200);
  t.deepEqual(toAdmin.body, { userId: member.userId, email: member.email, name: signupName(member), roleId: 'admin', roleName: 'admin' });
  t.is((await api.request('GET', `/v1/settings/api-keys?orgId=${owner.organizationId}`, member.as)).status, 200);

  const toCustom = await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body: { userId: member.userId, roleId: role.id } });
  t.like(toCustom.body, { roleId: role.id, roleName: 'Auditor' });
  t.is(await roleOf(owner.token, member.userId), role.id);
  t.is((await api.request('GET', `/v1/settings/api-keys?orgId=${owner.organizationId}`, member.as)).status, 403);
  t.is((await api.request('GET', '/api/deployments', member.as)).status, 200);
});

test('DELETE /v1/enterprise/assignments?userId= takes the role and the membership away; the member\'s keys stop working for good', async (t) => {
  const owner = await signup(api);
  const member = await addMember(api, owner.organizationId, 'admin');
  const key = await createApiKey(api, member.token, 'full_access');
  const keyInOrg = (await api.request('POST', '/v1/settings/api-keys', { ...member.as, body: { name: 'ci', scope: 'full_access' } })).body;
  t.is((await api.request('GET', '/api/deployments', { token: keyInOrg.key })).status, 200);

  const removed = await api.request('DELETE', `/v1/enterprise/assignments?userId=${member.userId}`, { token: owner.token });
  t.is(removed.status, 200);
  t.deepEqual(removed.body, { userId: member.userId, removed: true });
  t.is(await roleOf(owner.token, member.userId), undefined);
  t.is((await api.request('GET', '/api/deployments', member.as)).status, 403);
  t.is((await api.request('GET', '/api/deployments', { token: keyInOrg.key })).status, 401);
  // Back in the organization, the old key stays revoked; the key in their own organization is untouched.
  await api.pool.query(`INSERT INTO membership (id, created_at, organization_id, user_id, role) VALUES ('mem_test_back', now(), $1, $2, 'admin')`, [owner.organizationId, member.userId]);
  t.is((await api.request('GET', '/api/deployments', member.as)).status, 200);
  t.is((await api.request('GET', '/api/deployments', { token: keyInOrg.key })).status, 401);
  t.is((await api.request('GET', '/api/deployments', { token: key.key })).status, 200);
  t.is((await api.request('DELETE', `/v1/enterprise/assignments?userId=${member.userId}`, { token: owner.token })).status, 200);
  t.is((await api.request('DELETE', `/v1/enterprise/assignments?userId=${member.userId}`, { token: owner.token })).status, 404);
});

test('the last owner can be neither demoted nor removed (422); with a second owner either may step down', async (t) => {
  const owner = await signup(api);
  for (const [method, path, body, field] of [
    ['POST', '/v1/enterprise/assignments', { userId: owner.userId, roleId: 'admin' }, 'roleId'],
    ['DELETE', `/v1/enterprise/assignments?userId=${owner.userId}`, undefined, 'userId'],
  ] as const) {
    const res = await api.request(method, path, { token: owner.token, body });
    t.is(res.status, 422, method);
    t.is(res.body.message, `Invalid field ${field}: the member is the organization's last owner: make someone else owner first`);
  }
  t.is(await roleOf(owner.token, owner.userId), 'owner');

  const second = await addMember(api, owner.organizationId, 'viewer');
  t.is((await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body: { userId: second.userId, roleId: 'owner' } })).status, 200);
  t.is((await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body: { userId: owner.userId, roleId: 'member' } })).status, 200);
  t.is((await api.request('POST', '/v1/enterprise/assignments', { ...second.as, body: { userId: second.userId, roleId: 'admin' } })).status, 422);
});

test('two owners demoting each other at the same moment leave the organization one owner', async (t) => {
  const a = await signup(api);
  const b = await addMember(api, a.organizationId, 'owner');
  const [ab, ba] = await Promise.all([
    api.request('POST', '/v1/enterprise/assignments', { token: a.token, body: { userId: b.userId, roleId: 'admin' } }),
    api.request('POST', '/v1/enterprise/assignments', { ...b.as, body: { userId: a.userId, roleId: 'admin' } }),
  ]);
  t.deepEqual([ab.status, ba.status].sort(), [200, 422]);
  const owners = await api.pool.query(`SELECT count(*)::int AS n FROM membership WHERE organization_id = $1 AND role = 'owner'`, [a.organizationId]);
  t.is(owners.rows[0].n, 1);
});

test('nobody grants more than they hold: an admin cannot make or unmake owners; a role manager cannot exceed their own role', async (t) => {
  const owner = await signup(api);
  const admin = await addMember(api, owner.organizationId, 'admin');
  const viewer = await addMember(api, owner.organizationId, 'viewer');
  for (const body of [{ userId: viewer.userId, roleId: 'owner' }, { userId: admin.userId, roleId: 'owner' }, { userId: owner.userId, roleId: 'admin' }]) {
    t.is((await api.request('POST', '/v1/enterprise/assignments', { ...admin.as, body })).status, 403, JSON.stringify(body));
  }
  t.is((await api.request('DELETE', `/v1/enterprise/assignments?userId=${owner.userId}`, admin.as)).status, 403);
  t.is((await api.request('POST', '/v1/enterprise/assignments', { ...admin.as, body: { userId: viewer.userId, roleId: 'member' } })).status, 200);

  const manager = await createRole(owner.token, { name: 'Role manager', permissions: ['roles:read', 'roles:write', 'deployments:read'] });
  const m = await addMember(api, owner.organizationId, manager.id);
  const broader = await api.request('POST', '/v1/enterprise/roles', { ...m.as, body: { name: 'Deployer', permissions: ['deployments:read', 'deployments:write'] } });
  t.is(broader.status, 403);
  t.is(broader.body.message, 'Insufficient permissions: the role holds permissions you do not have (deployments:write)');
  t.is((await api.request('POST', '/v1/enterprise/assignments', { ...m.as, body: { userId: m.userId, roleId: 'admin' } })).status, 403);
  t.is((await api.request('POST', '/v1/enterprise/assignments', { ...m.as, body: { userId: admin.userId, roleId: manager.id } })).status, 403, 'an admin holds more than the manager');
  t.is((await api.request('DELETE', `/v1/enterprise/roles/${manager.id}`, m.as)).status, 409);
  const narrower = await api.request('POST', '/v1/enterprise/roles', { ...m.as, body: { name: 'Reader', permissions: ['deployments:read'] } });
  t.is(narrower.status, 201);
  // A viewer holds profile and organization permissions the manager lacks: theirs is not the manager's to change.
  t.is((await api.request('POST', '/v1/enterprise/assignments', { ...m.as, body: { userId: viewer.userId, roleId: narrower.body.id } })).status, 403);
  const reader = await addMember(api, owner.organizationId, narrower.body.id);
  t.is((await api.request('POST', '/v1/enterprise/assignments', { ...m.as, body: { userId: reader.userId, roleId: manager.id } })).status, 200);
  t.deepEqual((await customRoles(owner.token)).map((r: { name: string }) => r.name), ['Role manager', 'Reader']);
});

test('bad assignments are 400 or 404 naming what is wrong, and change nothing', async (t) => {
  const owner = await signup(api);
  const member = await addMember(api, owner.organizationId, 'viewer');
  for (const [body, status, field] of [
    [{ userId: member.userId }, 400, 'roleId'],
    [{ roleId: 'admin' }, 400, 'userId'],
    [{ userId: member.userId, roleId: 7 }, 400, 'roleId'],
    [{ userId: member.userId, roleId: 'admin', note: 'x' }, 400, 'note'],
    [{ userId: member.userId, roleId: 'x'.repeat(65) }, 422, 'roleId'],
  ] as const) {
    const res = await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.regex(res.body.message, new RegExp(field), JSON.stringify(body));
  }
  for (const roleId of ['superuser', 'role_unknown']) {
    const res = await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body: { userId: member.userId, roleId } });
    t.is(res.status, 404, roleId);
  }
  const noUser = await api.request('DELETE', '/v1/enterprise/assignments', { token: owner.token });
  t.is(noUser.status, 400);
  t.regex(noUser.body.message, /userId/);
  t.is((await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body: { userId: 'usr_unknown', roleId: 'admin' } })).status, 404);
  t.is(await roleOf(owner.token, member.userId), 'viewer');
});

test('another organization\'s roles and members are 404 everywhere, and stay as they were', async (t) => {
  const a = await signup(api);
  const b = await signup(api);
  const theirs = await createRole(b.token);
  const theirMember = await addMember(api, b.organizationId, theirs.id);
  const ours = await addMember(api, a.organizationId, 'viewer');
  for (const [method, path, body] of [
    ['PUT', `/v1/enterprise/roles/${theirs.id}`, { ...auditor, name: 'Hijacked' }],
    ['DELETE', `/v1/enterprise/roles/${theirs.id}`, undefined],
    ['GET', `/v1/enterprise/assignments?roleId=${theirs.id}`, undefined],
    ['POST', '/v1/enterprise/assignments', { userId: ours.userId, roleId: theirs.id }],
    ['POST', '/v1/enterprise/assignments', { userId: b.userId, roleId: 'viewer' }],
    ['POST', '/v1/enterprise/assignments', { userId: theirMember.userId, roleId: 'viewer' }],
    ['DELETE', `/v1/enterprise/assignments?userId=${b.userId}`, undefined],
  ] as const) {
    const res = await api.request(method, path, { token: a.token, body });
    t.is(res.status, 404, `${method} ${path} ${JSON.stringify(body)}`);
  }
  t.deepEqual(await customRoles(b.token), [{ ...theirs, description: auditor.description, builtIn: false }]);
  t.is(await roleOf(b.token, b.userId), 'owner');
  t.is(await roleOf(b.token, theirMember.userId), theirs.id);
  t.is(await roleOf(a.token, ours.userId), 'viewer');
  // The database refuses a membership naming another organization's role, whoever writes it.
  await t.throwsAsync(api.pool.query(`UPDATE membership SET role = $1 WHERE organization_id = $2 AND user_id = $3`, [theirs.id, a.organizationId, ours.userId]), { message: /membership_custom_role_fkey/ });
});

const routes = [
  ['GET', '/v1/enterprise/roles', undefined],
  ['POST', '/v1/enterprise/roles', auditor],
  ['PUT', '/v1/enterprise/roles/role_unknown', auditor],
  ['DELETE', '/v1/enterprise/roles/role_unknown', undefined],
  ['GET', '/v1/enterprise/assignments', undefined],
  ['POST', '/v1/enterprise/assignments', { userId: 'usr_unknown', roleId: 'viewer' }],
  ['DELETE', '/v1/enterprise/assignments?userId=usr_unknown', undefined],
] as const;

test('every route: no credential is 401', async (t) => {
  for (const [method, path, body] of routes) {
    const res = await api.request(method, path, { body });
    t.is(res.status, 401, `${method} ${path}`);
    t.is(res.body.code, 'INVALID_API_KEY');
  }
});

test('every route: members and viewers are 403; read-only keys read but do not write; deployments-only keys do neither', async (t) => {
  const owner = await signup(api);
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  const member = await addMember(api, owner.organizationId, 'member');
  const viewer = await addMember(api, owner.organizationId, 'viewer');
  for (const [method, path, body] of routes) {
    for (const caller of [member.as, viewer.as, { token: deploymentsOnly.key }]) {
      const res = await api.request(method, path, { ...caller, body });
      t.is(res.status, 403, `${method} ${path}`);
      t.is(res.body.code, 'INSUFFICIENT_PERMISSIONS');
    }
    t.is((await api.request(method, path, { token: readOnly.key, body })).status, method === 'GET' ? 200 : 403, `read_only ${method} ${path}`);
  }
  t.deepEqual(await customRoles(owner.token), []);
  t.is(await roleOf(owner.token, viewer.userId), 'viewer');
});
