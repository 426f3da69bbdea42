// The routes' permissions: scopes and roles grant what the docs' roles and scopes say (docs/concepts/organizations.md).
import test from 'ava';
import { isAllowed, ROLE_PERMISSIONS, ROLES, SCOPES, type Permission } from '../../control-plane/core/permissions.ts';
import { routePermissions, startTestApi, type TestApi } from '../support/control-plane.ts';

// The permissions the routes of the app declare; `internal` ones (Kiln's metrics token, no user credential)
// are checked apart.
let api: TestApi;
let routes: [string, Permission][];
let internalRoutes: [string, Permission][];
let writes: [string, Permission][];
/** POSTs that only read: opening the live-updates socket by ticket, and a round trip through it. */
const SOCKET_READS = new Set(['POST /v1/ws/tickets', 'POST /v1/ws/health']);
/** A POST that reads for its caller: asking the assistant (it keeps the conversation as the caller's own). */
const ASSISTANT_READS = new Set(['POST /v1/ai-assistant']);
test.before(async () => {
  api = await startTestApi(import.meta.filename);
  const all = Object.entries(routePermissions(api.app.routes));
  routes = all.filter(([, p]) => p !== 'internal');
  internalRoutes = all.filter(([, p]) => p === 'internal');
  writes = routes.filter(([route]) => !route.startsWith('GET '));
});
test.after.always(() => api?.close());

test('public routes are only the credential-free ones: health (liveness and readiness too), OpenAPI, the sign-in family, the SSO login with its callback, the invitee\'s side by token and Stripe\'s signed webhooks', (t) => {
  const publicRoutes = routes.filter(([, p]) => p === 'public').map(([r]) => r).sort();
  t.deepEqual(publicRoutes, [
    'GET /api/health', 'GET /api/health/live', 'GET /api/health/ready', 'GET /api/openapi.json', 'GET /v1/auth/sso/callback/{provider}', 'GET /v1/auth/sso/login',
    // Stripe's events: their signature (Stripe-Signature) is their credential; GET says what to subscribe each endpoint to.
    'GET /v1/billing/webhook',
    // Kiln's documentation, searched and asked (public as the OpenAPI document is).
    'GET /v1/health', 'GET /v1/health/live', 'GET /v1/health/ready', 'GET /v1/onboarding/help', 'GET /v1/openapi',
    // Invitation look-up by token; accepting or declining is the invitee's own act, the mailed token their credential.
    'GET /v1/team/invite/{token}',
    'POST /api/auth/login', 'POST /api/auth/refresh', 'POST /v1/auth/signin', 'POST /v1/auth/signup', 'POST /v1/billing/webhook', 'POST /v1/onboarding/help', 'POST /v1/payprovider/webhook',
    'POST /v1/team/invite/{token}/accept', 'POST /v1/team/invite/{token}/decline',
  ]);
});

test('internal routes are Kiln\'s own metrics alone, which no role or scope is allowed, platform administrators included', (t) => {
  t.deepEqual(internalRoutes.map(([route]) => route), ['GET /metrics/internal', 'GET /v1/metrics/internal']);
  for (const role of ROLES) for (const scope of SCOPES) t.false(isAllowed('internal', ROLE_PERMISSIONS[role], scope, true), `${role} ${scope}`);
});

// Scopes are checked for an owner who is also a platform administrator, so admin routes count too.
test('read only: every GET but billing, no write', (t) => {
  for (const [route, permission] of routes) {
    // Validating a model is a POST that changes nothing: it needs only catalog:read. Billing is full access only.
    const expected = ((route.startsWith('GET ') || SOCKET_READS.has(route) || ASSISTANT_READS.has(route)) && permission !== 'billing:read') || permission === 'public' || permission === 'catalog:read';
    t.is(isAllowed(permission, ROLE_PERMISSIONS.owner, 'read_only', true), expected, route);
  }
});

test('deployments only: deployment operations (recovery and inference included) and the catalog, nothing of API keys, webhooks or the organization\'s models', (t) => {
  for (const [route, permission] of routes) {
    // Resetting a provisioning circuit is platform administration (circuits are shared by every organization).
    const platformOnly = route.includes('/admin/') || route === 'POST /v1/recovery/circuits';
    // Reading models (the catalog and the organization's) is theirs; changing the organization's models is not.
    // Reading templates and deploying one are theirs too (with the updates of templates); making or changing templates is not.
    // Deployments' metrics, one by one or the organization's, are deployment reads; comparing GPU offers' costs is a catalog read.
    // The live-updates socket (GET /v1/ws, its ticket and round trip) carries deployment events: deployment reads.
    // GraphQL is open to every credential (catalog:read); its fields then ask for their REST routes' permissions.
    const deploymentRoute = (['/deployments', '/recovery', '/inference', '/gpu-types', '/models', '/templates', '/template-updates', '/monitoring/metrics', '/monitoring/analytics', '/providers/compare-costs', '/graphql'].some((part) => route.includes(part))
      || route === 'GET /v1/metrics' || route === 'GET /v1/dashboard/metrics' || route === 'GET /v1/ws' || SOCKET_READS.has(route)) && permission !== 'models:write' && permission !== 'templates:write';
    const expected = permission === 'public' || (!platformOnly && deploymentRoute);
    t.is(isAllowed(permission, ROLE_PERMISSIONS.owner, 'deployments_only', true), expected, route);
  }
});

test('full access: everything the role allows; members cannot manage API keys, viewers cannot write but their own profile', (t) => {
  for (const [route, permission] of routes) t.true(isAllowed(permission, ROLE_PERMISSIONS.owner, 'full_access', true), route);
  for (const [route, permission] of writes.filter(([r]) => r.includes('/api-keys'))) t.false(isAllowed(permission, ROLE_PERMISSIONS.member, 'full_access'), route);
  for (const [route, permission] of writes.filter(([, p]) => p !== 'public')) {
    // Their own password, their own notifications (marking them read, their preferences) and their own onboarding (dismissing, skipping) are their profile's.
    const ownProfile = route.includes('/v1/settings/profile') || route === 'POST /v1/auth/password' || (route.startsWith('POST /v1/notifications') && permission === 'profile:write')
      || ((route === 'POST /v1/onboarding' || route === 'POST /v1/onboarding/steps') && permission === 'profile:write');
    t.is(isAllowed(permission, ROLE_PERMISSIONS.viewer, 'full_access'), ownProfile || permission === 'catalog:read' || SOCKET_READS.has(route) || ASSISTANT_READS.has(route), route);
  }
  t.true(isAllowed('deployments:write', ROLE_PERMISSIONS.member, 'full_access'));
  // Inference uses a deployment without changing it: members may, viewers may not.
  t.true(isAllowed('deployments:infer', ROLE_PERMISSIONS.member, 'full_access'));
  t.false(isAllowed('deployments:infer', ROLE_PERMISSIONS.viewer, 'full_access'));
});

test('a credential never exceeds its role, whatever its scope', (t) => {
  for (const role of ROLES) {
    for (const scope of SCOPES) {
      for (const [route, permission] of routes) {
        if (isAllowed(permission, ROLE_PERMISSIONS[role], scope)) t.true(isAllowed(permission, ROLE_PERMISSIONS[role], 'full_access'), `${role} ${scope} ${route}`);
      }
    }
  }
});

test('platform administration needs a platform administrator: no organization role or scope grants it', (t) => {
  const admin = routes.filter(([route]) => route.includes(' /v1/admin/') || route === 'POST /v1/recovery/circuits');
  t.true(admin.length > 1);
  for (const [route, permission] of admin) {
    t.is(permission, route.startsWith('GET ') ? 'admin:read' : 'admin:write', route);
    for (const role of ROLES) for (const scope of SCOPES) t.false(isAllowed(permission, ROLE_PERMISSIONS[role], scope, false), `${role} ${scope} ${route}`);
    t.true(isAllowed(permission, ROLE_PERMISSIONS.viewer, 'full_access', true), route);
    t.is(isAllowed(permission, ROLE_PERMISSIONS.owner, 'read_only', true), route.startsWith('GET '), route);
    t.false(isAllowed(permission, ROLE_PERMISSIONS.owner, 'deployments_only', true), route);
  }
});

test('a custom role grants what it lists, narrowed by the scope; platform administration only with KILN_ADMIN_EMAILS', (t) => {
  const auditor = ['audit:read', 'deployments:read'] as const;
  t.true(isAllowed('audit:read', auditor, 'full_access'));
  t.true(isAllowed('audit:read', auditor, 'read_only'));
  t.false(isAllowed('audit:read', auditor, 'deployments_only'));
  t.false(isAllowed('deployments:write', auditor, 'full_access'));
  t.false(isAllowed('admin:read', ['admin:read'], 'full_access'));
  t.true(isAllowed('admin:read', [], 'full_access', true));
});

test('built-in roles hold organization permissions only', (t) => {
  for (const role of ROLES) t.false(ROLE_PERMISSIONS[role].some((p) => p.startsWith('admin:')), role);
});
