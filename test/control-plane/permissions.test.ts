// The permission table, as data: scopes and roles grant what DESIGN.md says.
import test from 'ava';
import { isAllowed, ROLES, ROUTE_PERMISSIONS, SCOPES } from '../../control-plane/http/permissions.ts';

const routes = Object.entries(ROUTE_PERMISSIONS);
const writes = routes.filter(([route]) => !route.startsWith('GET '));

test('public routes are only those DESIGN.md names: health, OpenAPI, the sign-in family, the SSO login with its callback and the invitee\'s side by token', (t) => {
  const publicRoutes = routes.filter(([, p]) => p === 'public').map(([r]) => r).sort();
  t.deepEqual(publicRoutes, [
    'GET /api/health', 'GET /api/openapi.json', 'GET /v1/auth/sso/callback/{provider}', 'GET /v1/auth/sso/login', 'GET /v1/health', 'GET /v1/openapi',
    // Invitation look-up by token; accepting or declining is the invitee's own act, the mailed token their credential.
    'GET /v1/team/invite/{token}',
    'POST /api/auth/login', 'POST /api/auth/refresh', 'POST /v1/auth/signin', 'POST /v1/auth/signup',
    'POST /v1/team/invite/{token}/accept', 'POST /v1/team/invite/{token}/decline',
  ]);
});

test('read only: every GET, no write', (t) => {
  for (const [route, permission] of routes) {
    t.is(isAllowed(permission, 'owner', 'read_only'), route.startsWith('GET ') || permission === 'public', route);
  }
});

test('deployments only: deployment operations (recovery included) and the catalog, nothing of API keys or webhooks', (t) => {
  for (const [route, permission] of routes) {
    const expected = permission === 'public' || route.includes('/deployments') || route.includes('/recovery') || route.includes('/gpu-types');
    t.is(isAllowed(permission, 'owner', 'deployments_only'), expected, route);
  }
});

test('full access: everything the role allows; members cannot manage API keys, viewers cannot write but their own profile', (t) => {
  for (const [route, permission] of routes) t.true(isAllowed(permission, 'owner', 'full_access'), route);
  for (const [route, permission] of writes.filter(([r]) => r.includes('/api-keys'))) t.false(isAllowed(permission, 'member', 'full_access'), route);
  for (const [route, permission] of writes.filter(([, p]) => p !== 'public')) {
    t.is(isAllowed(permission, 'viewer', 'full_access'), route.includes('/v1/settings/profile'), route);
  }
  t.true(isAllowed('deployments:write', 'member', 'full_access'));
});

test('a credential never exceeds its role, whatever its scope', (t) => {
  for (const role of ROLES) {
    for (const scope of SCOPES) {
      for (const [route, permission] of routes) {
        if (isAllowed(permission, role, scope)) t.true(isAllowed(permission, role, 'full_access'), `${role} ${scope} ${route}`);
      }
    }
  }
});
