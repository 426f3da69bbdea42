// The permission table, as data: scopes and roles grant what DESIGN.md says.
import test from 'ava';
import { isAllowed, ROLES, ROUTE_PERMISSIONS, SCOPES } from '../../control-plane/http/permissions.ts';

const routes = Object.entries(ROUTE_PERMISSIONS);
const writes = routes.filter(([route]) => !route.startsWith('GET '));

test('public routes are only those DESIGN.md names: health, OpenAPI and the sign-in family', (t) => {
  const publicRoutes = routes.filter(([, p]) => p === 'public').map(([r]) => r).sort();
  t.deepEqual(publicRoutes, [
    'GET /api/health', 'GET /api/openapi.json', 'GET /v1/health', 'GET /v1/openapi',
    'POST /api/auth/login', 'POST /api/auth/refresh', 'POST /v1/auth/signin', 'POST /v1/auth/signup',
  ]);
});

// Scopes are checked for an owner who is also a platform administrator, so admin routes count too.
test('read only: every GET, no write', (t) => {
  for (const [route, permission] of routes) {
    t.is(isAllowed(permission, 'owner', 'read_only', true), route.startsWith('GET ') || permission === 'public', route);
  }
});

test('deployments only: deployment operations (recovery included) and the catalog, nothing of API keys or webhooks', (t) => {
  for (const [route, permission] of routes) {
    const expected = permission === 'public' || route.includes('/deployments') || route.includes('/recovery') || route.includes('/gpu-types');
    t.is(isAllowed(permission, 'owner', 'deployments_only', true), expected, route);
  }
});

test('admin routes need a platform administrator, whatever the organization role', (t) => {
  const admin = routes.filter(([route]) => route.includes('/admin/'));
  t.true(admin.length > 0);
  for (const [route, permission] of admin) {
    t.true(permission.startsWith('admin:'), route);
    t.false(isAllowed(permission, 'owner', 'full_access'), route);
    t.true(isAllowed(permission, 'viewer', 'full_access', true), route);
  }
});

test('full access: everything the role allows; members cannot manage API keys, viewers cannot write', (t) => {
  for (const [route, permission] of routes) t.true(isAllowed(permission, 'owner', 'full_access', true), route);
  for (const [route, permission] of writes.filter(([r]) => r.includes('/api-keys'))) t.false(isAllowed(permission, 'member', 'full_access'), route);
  for (const [route, permission] of writes.filter(([, p]) => p !== 'public')) t.false(isAllowed(permission, 'viewer', 'full_access'), route);
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
