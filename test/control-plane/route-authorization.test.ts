// The routes' permissions, over HTTP: every route the app serves, called by each built-in role and a
// custom role, each with a login session and an API key of each scope, is refused (403) exactly when the
// table says the role and the scope together do not allow it. A platform administrator (an owner listed in
// KILN_ADMIN_EMAILS, not an organization role) walks them too: admin:* routes open to them alone. Requests carry no valid input, so what is
// allowed fails validation or finds nothing (400, 404...) and changes nothing. An `internal` route (GET
// /metrics/internal) takes Kiln's metrics token and no user credential: every one of them is 401 there.
import test from 'ava';
import {
  ROLE_PERMISSIONS, ROLES, SCOPE_PERMISSIONS, SCOPES, type OrganizationPermission, type Permission, type Scope,
} from '../../control-plane/core/permissions.ts';
import { signupAdmin } from '../support/admin.ts';
import { addMember, routePermissions, signup, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename, { config: { metricsToken: 'route-authorization-metrics-token-0123456789' } });
});
test.after.always(() => api?.close());

const CUSTOM: readonly OrganizationPermission[] = ['deployments:read', 'webhooks:read', 'webhooks:write', 'roles:read', 'audit:read'];

interface Credential {
  label: string;
  granted: readonly Permission[];
  scope: Scope;
  platformAdmin?: boolean;
  options: { token: string; headers?: Record<string, string> };
}

test('each role and scope is allowed exactly the routes their permissions grant it', async (t) => {
  const owner = await signup(api, 'owner');
  const custom = await api.request('POST', '/v1/enterprise/roles', { token: owner.token, body: { name: 'Webhook keeper', permissions: CUSTOM } });
  t.is(custom.status, 201);

  const credentials: Credential[] = [];
  for (const role of [...ROLES, custom.body.id as string]) {
    const granted = role === custom.body.id ? CUSTOM : ROLE_PERMISSIONS[role as (typeof ROLES)[number]];
    // Keys are made while the user may make them (as admin), then the user is given the role under test.
    const user = role === 'owner' ? { ...owner, as: { token: owner.token, headers: {} } } : await addMember(api, owner.organizationId, 'admin', 'walker');
    credentials.push({ label: `${role} session`, granted, scope: 'full_access', options: user.as });
    for (const scope of SCOPES) {
      const key = await api.request('POST', '/v1/settings/api-keys', { ...user.as, body: { name: scope, scope } });
      credentials.push({ label: `${role} ${scope} key`, granted, scope, options: { token: key.body.key } });
    }
    // Through the API, as an owner would: the change applies at once to the credentials made above.
    if (role !== 'owner') {
      const assigned = await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body: { userId: user.userId, roleId: role } });
      t.is(assigned.status, 200, JSON.stringify(assigned.body));
    }
  }
  const admin = await signupAdmin(api);
  credentials.push({ label: 'platform admin session', granted: ROLE_PERMISSIONS.owner, scope: 'full_access', platformAdmin: true, options: { token: admin.token } });
  for (const scope of SCOPES) {
    const key = await api.request('POST', '/v1/settings/api-keys', { token: admin.token, body: { name: scope, scope } });
    credentials.push({ label: `platform admin ${scope} key`, granted: ROLE_PERMISSIONS.owner, scope, platformAdmin: true, options: { token: key.body.key } });
  }

  const mismatches: string[] = [];
  await Promise.all(credentials.map(async (credential) => {
    for (const [route, permission] of Object.entries(routePermissions(api.app.routes))) {
      const [method, path] = route.split(' ') as [string, string];
      const res = await api.request(method, path.replace(/\{\w+\}/g, 'unknown'), credential.options);
      if (permission === 'internal') {
        if (res.status !== 401) mismatches.push(`${credential.label}: ${route} answered ${res.status}, an internal route refuses every user credential (401)`);
        continue;
      }
      const held = permission.startsWith('admin:') ? credential.platformAdmin === true : credential.granted.includes(permission);
      const allowed = permission === 'public' || (SCOPE_PERMISSIONS[credential.scope].includes(permission) && held);
      if ((res.status === 403) === allowed) mismatches.push(`${credential.label}: ${route} answered ${res.status}, table says ${allowed ? 'allowed' : 'refused'}`);
    }
  }));
  t.deepEqual(mismatches, []);
  t.deepEqual(Object.entries(routePermissions(api.app.routes)).filter(([, permission]) => permission === 'internal').map(([route]) => route), ['GET /metrics/internal', 'GET /v1/metrics/internal']);
  t.is(credentials.length, (ROLES.length + 2) * (SCOPES.length + 1));
});
