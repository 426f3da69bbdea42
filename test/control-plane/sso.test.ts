// SSO with OpenID Connect against a real OpenID provider (oidc-provider, https) in the test process: the
// configuration routes, discovery checks, and the whole login, followed redirect by redirect.
import test from 'ava';
import { addMember, createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';
import { startHttpsServer, startTestIdp, type TestIdp } from '../support/oidc-provider.ts';

let api: TestApi;
let production: TestApi;
let idp: TestIdp;
let fakeIssuers: Awaited<ReturnType<typeof startHttpsServer>>;
let closedPort: string;

test.before(async () => {
  api = await startTestApi(import.meta.filename);
  production = await startTestApi(import.meta.filename, {
    config: { env: 'production', signingKey: 'test-signing-key-0123456789abcdefghijklmnop', endpointDomain: 'endpoints.test', trustProxy: false, adminEmails: [] },
  });
  idp = await startTestIdp({ redirect_uris: [`${api.url}/v1/auth/sso/callback/oidc`, `${api.url}/v1/auth/sso/callback/okta`] });
  // Issuers that are not what they should be: one without the code flow or PKCE, anything else a 404.
  fakeIssuers = await startHttpsServer((req, res) => {
    if (req.url === '/implicit-only/.well-known/openid-configuration') {
      const issuer = `${fakeIssuers.url}/implicit-only`;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({
        issuer, authorization_endpoint: `${issuer}/auth`, jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['id_token'], code_challenge_methods_supported: ['plain'],
      }));
      return;
    }
    res.statusCode = 404;
    res.end('not found');
  });
  const spare = await startHttpsServer(() => undefined);
  closedPort = new URL(spare.url).port;
  await new Promise((resolve) => spare.server.close(resolve));
});
test.after.always(async () => {
  await idp?.close();
  fakeIssuers?.server.close();
  await api?.close();
  await production?.close();
});

let counter = 0;
const uniqueEmail = (label: string, domain = 'corp.test') => `${label}-${++counter}-${Date.now()}@${domain}`;

function configuration(overrides: Record<string, unknown> = {}) {
  return {
    provider: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret,
    allowedDomains: ['corp.test', 'Example.com'], defaultRole: 'member', jitProvisioning: true, ...overrides,
  };
}

async function configured(label = 'sso', overrides: Record<string, unknown> = {}) {
  const owner = await signup(api, label);
  const res = await api.request('POST', '/v1/auth/sso', { token: owner.token, body: configuration(overrides) });
  if (res.status !== 201) throw new Error(`SSO configuration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...owner, config: res.body };
}

/** GET /v1/auth/sso/login without following the redirect. */
async function startLogin(target: TestApi, orgId: string) {
  const res = await fetch(`${target.url}/v1/auth/sso/login?orgId=${orgId}`, { redirect: 'manual' });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read response fields freely
  const body: any = res.status === 302 ? undefined : await res.json();
  return { status: res.status, location: res.headers.get('location'), body };
}

/** A whole login up to the provider's redirect back to Kiln: the callback path to call. */
async function loginAt(orgId: string, email: string): Promise<string> {
  const started = await startLogin(api, orgId);
  if (started.status !== 302) throw new Error(`login start failed: ${started.status} ${JSON.stringify(started.body)}`);
  const back = await idp.authorize(started.location!, email);
  return back.pathname + back.search;
}

async function userCount(email: string): Promise<number> {
  return (await api.pool.query('SELECT count(*)::int AS n FROM "user" WHERE email = $1', [email])).rows[0].n;
}

test('POST, GET, PUT, DELETE /v1/auth/sso manage one configuration; the client secret is sealed and never returned', async (t) => {
  const owner = await signup(api, 'crud');
  const created = await api.request('POST', '/v1/auth/sso', { token: owner.token, body: configuration() });
  t.is(created.status, 201);
  t.like(created.body, {
    organizationId: owner.organizationId, provider: 'oidc', issuer: idp.issuer, clientId: 'kiln', allowedDomains: ['corp.test', 'example.com'],
    defaultRole: 'member', jitProvisioning: true,
    redirectUri: `${api.url}/v1/auth/sso/callback/oidc`, loginUrl: `${api.url}/v1/auth/sso/login?orgId=${owner.organizationId}`,
  });
  t.regex(created.body.id, /^sso_[0-9a-z]{20}$/);
  t.false(JSON.stringify(created.body).includes(idp.clientSecret));
  const stored = await api.pool.query('SELECT sealed_client_secret FROM sso_configuration WHERE id = $1', [created.body.id]);
  t.regex(stored.rows[0].sealed_client_secret, /^v1\./);
  t.false(stored.rows[0].sealed_client_secret.includes(idp.clientSecret));

  const read = await api.request('GET', `/v1/auth/sso?orgId=${owner.organizationId}`, { token: owner.token });
  t.deepEqual(read.body, created.body);
  t.is((await api.request('POST', '/v1/auth/sso', { token: owner.token, body: configuration() })).status, 409);

  const { clientSecret: _kept, ...withoutSecret } = configuration({ provider: 'okta', allowedDomains: ['corp.test'], defaultRole: 'viewer', jitProvisioning: false });
  const replaced = await api.request('PUT', '/v1/auth/sso', { token: owner.token, body: withoutSecret });
  t.is(replaced.status, 200);
  t.like(replaced.body, { id: created.body.id, provider: 'okta', allowedDomains: ['corp.test'], defaultRole: 'viewer', jitProvisioning: false, redirectUri: `${api.url}/v1/auth/sso/callback/okta` });
  const after = await api.pool.query('SELECT sealed_client_secret FROM sso_configuration WHERE id = $1', [created.body.id]);
  t.is(after.rows[0].sealed_client_secret, stored.rows[0].sealed_client_secret, 'an absent secret keeps the stored one');
  // The kept secret still authenticates Kiln at the provider.
  const verified = await api.request('GET', `/v1/enterprise/sso/verify?orgId=${owner.organizationId}`, { token: owner.token });
  t.true(verified.body.ok, JSON.stringify(verified.body));

  const deleted = await api.request('DELETE', '/v1/auth/sso', { token: owner.token });
  t.deepEqual(deleted.body, { id: created.body.id, deleted: true });
  t.is((await api.request('GET', `/v1/auth/sso?orgId=${owner.organizationId}`, { token: owner.token })).status, 404);
  t.is((await api.request('DELETE', '/v1/auth/sso', { token: owner.token })).status, 404);
  t.is((await api.request('PUT', '/v1/auth/sso', { token: owner.token, body: configuration() })).status, 404);
});

test('/v1/enterprise/sso/configure reads and saves the same configuration as /v1/auth/sso; the first save needs the secret', async (t) => {
  const owner = await signup(api, 'configure');
  t.is((await api.request('GET', `/v1/enterprise/sso/configure?orgId=${owner.organizationId}`, { token: owner.token })).status, 404);
  const { clientSecret: _omitted, ...withoutSecret } = configuration();
  const refused = await api.request('POST', '/v1/enterprise/sso/configure', { token: owner.token, body: withoutSecret });
  t.is(refused.status, 422);
  t.regex(refused.body.message, /clientSecret/);
  t.is((await api.request('GET', `/v1/auth/sso?orgId=${owner.organizationId}`, { token: owner.token })).status, 404, 'nothing stored');

  const saved = await api.request('POST', '/v1/enterprise/sso/configure', { token: owner.token, body: configuration() });
  t.is(saved.status, 200);
  t.deepEqual((await api.request('GET', `/v1/auth/sso?orgId=${owner.organizationId}`, { token: owner.token })).body, saved.body);
  const resaved = await api.request('POST', '/v1/enterprise/sso/configure', { token: owner.token, body: { ...withoutSecret, jitProvisioning: false } });
  t.is(resaved.body.id, saved.body.id);
  t.false(resaved.body.jitProvisioning);
  t.deepEqual((await api.request('GET', `/v1/enterprise/sso/configure?orgId=${owner.organizationId}`, { token: owner.token })).body, resaved.body);
  t.is((await api.pool.query('SELECT count(*)::int AS n FROM sso_configuration WHERE organization_id = $1', [owner.organizationId])).rows[0].n, 1);
});

test('bad configurations are 400 (missing, wrong type, unknown field) or 422 (broken rule) naming the field, and store nothing', async (t) => {
  const owner = await signup(api, 'bad');
  const cases: Array<[Record<string, unknown>, string, number]> = [
    [configuration({ issuer: 'http://idp.example.com' }), 'issuer', 422],
    [configuration({ issuer: 'https://idp.example.com/?tenant=1' }), 'issuer', 422],
    [configuration({ issuer: 'not a url' }), 'issuer', 422],
    [configuration({ allowedDomains: [] }), 'allowedDomains', 422],
    [configuration({ allowedDomains: ['corp.test', 'not a domain'] }), 'allowedDomains.1', 422],
    [configuration({ defaultRole: 'owner' }), 'defaultRole', 422],
    [configuration({ provider: 'saml' }), 'provider', 422],
    [configuration({ clientId: '' }), 'clientId', 422],
    [configuration({ jitProvisioning: 'yes' }), 'jitProvisioning', 400],
    [configuration({ allowedDomains: 'corp.test' }), 'allowedDomains', 400],
    [configuration({ clientSecret: undefined }), 'clientSecret', 400],
    [configuration({ extra: true }), 'body', 400],
  ];
  for (const [body, field, status] of cases) {
    const res = await api.request('POST', '/v1/auth/sso', { token: owner.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.startsWith(`Invalid field ${field}`), `${field}: ${res.body.message}`);
  }
  t.is((await api.request('POST', '/v1/auth/sso', { token: owner.token, body: '{"issuer":' })).status, 400);
  t.is((await api.request('POST', '/v1/enterprise/sso/configure', { token: owner.token, body: configuration({ issuer: 'http://idp.example.com' }) })).status, 422);
  t.is((await api.request('GET', `/v1/auth/sso?orgId=${owner.organizationId}`, { token: owner.token })).status, 404, 'nothing stored');

  const { config } = await configured('bad-put');
  const again = await signup(api, 'bad-put-owner');
  t.is((await api.request('PUT', '/v1/auth/sso', { token: again.token, body: configuration({ defaultRole: 'owner' }) })).status, 422);
  t.is(config.defaultRole, 'member');
});

const CONFIGURATION_ROUTES: Array<[string, string, unknown?]> = [
  ['GET', '/v1/auth/sso'],
  ['POST', '/v1/auth/sso', configuration],
  ['PUT', '/v1/auth/sso', configuration],
  ['DELETE', '/v1/auth/sso'],
  ['GET', '/v1/enterprise/sso/configure'],
  ['POST', '/v1/enterprise/sso/configure', configuration],
  ['GET', '/v1/enterprise/sso/verify'],
  ['POST', '/v1/enterprise/sso/verify', () => ({ issuer: idp.issuer })],
  ['GET', '/v1/enterprise/sso/providers'],
];
const bodyOf = (make: unknown) => (typeof make === 'function' ? make() : undefined);

test('without a credential every configuration route is 401', async (t) => {
  for (const [method, path, body] of CONFIGURATION_ROUTES) {
    const res = await api.request(method, path, { body: bodyOf(body) });
    t.is(res.status, 401, `${method} ${path}`);
    t.is(res.body.code, 'INVALID_API_KEY');
  }
});

test('scopes and roles: read-only keys read, deployments-only keys and members or viewers get nothing (403), and nothing changes', async (t) => {
  const owner = await configured('perm');
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  const member = await signup(api, 'perm-member');
  const viewer = await signup(api, 'perm-viewer');
  await api.pool.query(`INSERT INTO membership (id, created_at, organization_id, user_id, role) VALUES ($1, now(), $2, $3, 'member'), ($4, now(), $2, $5, 'viewer')`,
    [`mem_sso_member_${counter++}`, owner.organizationId, member.userId, `mem_sso_viewer_${counter++}`, viewer.userId]);

  for (const [method, path, body] of CONFIGURATION_ROUTES) {
    const res = await api.request(method, `${path}?orgId=${owner.organizationId}`, { token: readOnly.key, body: bodyOf(body) });
    t.is(res.status, method === 'GET' ? 200 : 403, `read_only ${method} ${path}`);
    t.is((await api.request(method, `${path}?orgId=${owner.organizationId}`, { token: deploymentsOnly.key, body: bodyOf(body) })).status, 403, `deployments_only ${method} ${path}`);
    for (const user of [member, viewer]) {
      const asMember = await api.request(method, `${path}?orgId=${owner.organizationId}`, { token: user.token, body: bodyOf(body) });
      t.is(asMember.status, 403, `${user.email} ${method} ${path}`);
      t.is(asMember.body.code, 'INSUFFICIENT_PERMISSIONS');
    }
  }
  t.deepEqual((await api.request('GET', `/v1/auth/sso?orgId=${owner.organizationId}`, { token: owner.token })).body, owner.config, 'unchanged');
});

test('a custom role with sso:write cannot make the default role one with more than it holds', async (t) => {
  const owner = await signup(api, 'sso-delegate');
  const role = await api.request('POST', '/v1/enterprise/roles', {
    token: owner.token, body: { name: 'SSO operator', permissions: ['sso:read', 'sso:write', 'deployments:read', 'catalog:read', 'templates:read', 'profile:read', 'profile:write', 'organization:read', 'team:read', 'alerts:read'] },
  });
  t.is(role.status, 201);
  const operator = await addMember(api, owner.organizationId, role.body.id);
  const asOperator = (method: 'POST' | 'PUT', defaultRole: string) =>
    api.request(method, `/v1/auth/sso?orgId=${owner.organizationId}`, { token: operator.token, body: configuration({ defaultRole }) });
  const refused = await asOperator('POST', 'admin');
  t.is(refused.status, 403);
  t.regex(refused.body.message, /the default role admin holds permissions you do not have/);
  t.is((await asOperator('POST', 'member')).status, 403, 'member holds deployments:write');
  t.is((await asOperator('POST', 'viewer')).status, 201);
  t.is((await asOperator('PUT', 'admin')).status, 403);
  t.is((await api.request('GET', `/v1/auth/sso?orgId=${owner.organizationId}`, { token: owner.token })).body.defaultRole, 'viewer', 'unchanged');
});

test("another organization's configuration is never visible nor changed", async (t) => {
  const a = await configured('org-a');
  const b = await signup(api, 'org-b');
  t.is((await api.request('GET', `/v1/auth/sso?orgId=${b.organizationId}`, { token: b.token })).status, 404);
  t.is((await api.request('GET', `/v1/enterprise/sso/configure?orgId=${b.organizationId}`, { token: b.token })).status, 404);
  t.is((await api.request('GET', `/v1/enterprise/sso/verify?orgId=${b.organizationId}`, { token: b.token })).status, 404);
  t.is((await api.request('DELETE', '/v1/auth/sso', { token: b.token })).status, 404);
  t.is((await api.request('PUT', '/v1/auth/sso', { token: b.token, body: configuration() })).status, 404);
  for (const path of ['/v1/auth/sso', '/v1/enterprise/sso/configure', '/v1/enterprise/sso/verify']) {
    const foreign = await api.request('GET', `${path}?orgId=${a.organizationId}`, { token: b.token });
    t.is(foreign.status, 403, path);
    t.false(JSON.stringify(foreign.body).includes(idp.issuer), path);
  }
  const own = await api.request('POST', '/v1/auth/sso', { token: b.token, body: configuration({ allowedDomains: ['b.test'] }) });
  t.is(own.status, 201);
  t.not(own.body.id, a.config.id);
  t.deepEqual((await api.request('GET', `/v1/auth/sso?orgId=${a.organizationId}`, { token: a.token })).body, a.config, "A's configuration is untouched");
});

test('GET /v1/enterprise/sso/providers lists generic OIDC and the presets with their issuer templates', async (t) => {
  const { token, organizationId } = await signup(api, 'providers');
  const res = await api.request('GET', `/v1/enterprise/sso/providers?orgId=${organizationId}`, { token });
  t.is(res.status, 200);
  t.deepEqual(res.body.map((p: { id: string }) => p.id), ['oidc', 'okta', 'azure-ad', 'google-workspace']);
  t.like(res.body.find((p: { id: string }) => p.id === 'azure-ad'), { issuerTemplate: 'https://login.microsoftonline.com/{tenantId}/v2.0', parameters: ['tenantId'] });
  t.like(res.body.find((p: { id: string }) => p.id === 'google-workspace'), { issuerTemplate: 'https://accounts.google.com', parameters: [] });
  t.is(res.body[0].issuerTemplate, null);
});

const statuses = (body: { checks: Array<{ name: string; status: string }> }) => Object.fromEntries(body.checks.map((c) => [c.name, c.status]));

test('verify: the configured provider passes every check, client credentials included', async (t) => {
  const { token, organizationId } = await configured('verify');
  const res = await api.request('GET', `/v1/enterprise/sso/verify?orgId=${organizationId}`, { token });
  t.is(res.status, 200);
  t.true(res.body.ok);
  t.is(res.body.issuer, idp.issuer);
  t.deepEqual(statuses(res.body), { reachable: 'passed', openid_configuration: 'passed', authorization_code: 'passed', pkce_s256: 'passed', client_credentials: 'passed' });
});

test('verify reports what is wrong as a structured result: refused credentials, unreachable, not OIDC, no code flow or PKCE', async (t) => {
  const { token } = await signup(api, 'verify-bad');
  const verify = async (body: Record<string, unknown>) => {
    const res = await api.request('POST', '/v1/enterprise/sso/verify', { token, body });
    t.is(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  const wrongSecret = await verify({ issuer: idp.issuer, clientId: idp.clientId, clientSecret: 'not-the-secret' });
  t.false(wrongSecret.ok);
  t.is(statuses(wrongSecret).client_credentials, 'failed');
  t.is(statuses(wrongSecret).authorization_code, 'passed');

  const noClient = await verify({ issuer: idp.issuer });
  t.true(noClient.ok);
  t.is(statuses(noClient).client_credentials, 'skipped');

  const unreachable = await verify({ issuer: `https://127.0.0.1:${closedPort}`, clientId: 'x', clientSecret: 'y' });
  t.false(unreachable.ok);
  t.deepEqual(statuses(unreachable), { reachable: 'failed', openid_configuration: 'skipped', authorization_code: 'skipped', pkce_s256: 'skipped', client_credentials: 'skipped' });
  t.regex(unreachable.checks[0].message, /ECONNREFUSED/);

  const notOidc = await verify({ issuer: `${fakeIssuers.url}/nothing-here` });
  t.false(notOidc.ok);
  t.like(statuses(notOidc), { reachable: 'passed', openid_configuration: 'failed', authorization_code: 'skipped' });

  const implicitOnly = await verify({ issuer: `${fakeIssuers.url}/implicit-only`, clientId: 'x', clientSecret: 'y' });
  t.false(implicitOnly.ok);
  t.deepEqual(statuses(implicitOnly), { reachable: 'passed', openid_configuration: 'passed', authorization_code: 'failed', pkce_s256: 'failed', client_credentials: 'skipped' });

  for (const [body, field, status] of [
    [{ issuer: 'http://127.0.0.1:1' }, 'issuer', 422],
    [{ issuer: idp.issuer, clientSecret: 7 }, 'clientSecret', 400],
    [{}, 'issuer', 400],
  ] as const) {
    const res = await api.request('POST', '/v1/enterprise/sso/verify', { token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.startsWith(`Invalid field ${field}`), res.body.message);
  }
});

test('in production an issuer on a loopback or private address is not contacted (SSRF): verify reports it, login is 503', async (t) => {
  const owner = await signup(production, 'prod');
  const res = await production.request('POST', '/v1/enterprise/sso/verify', { token: owner.token, body: { issuer: idp.issuer } });
  t.is(res.status, 200);
  t.false(res.body.ok);
  t.is(statuses(res.body).reachable, 'failed');
  t.regex(res.body.checks[0].message, /loopback, private or link-local/);
  t.is((await production.request('POST', '/v1/auth/sso', { token: owner.token, body: configuration() })).status, 201);
  const started = await startLogin(production, owner.organizationId);
  t.is(started.status, 503);
  t.is(started.body.code, 'SERVICE_UNAVAILABLE');
});

test('SSO login: redirect with PKCE S256, state and nonce; callback creates the user (JIT) with the default role and answers a login session', async (t) => {
  const owner = await configured('login');
  const started = await startLogin(api, owner.organizationId);
  t.is(started.status, 302);
  const authorization = new URL(started.location!);
  t.is(authorization.origin, idp.issuer);
  t.like(Object.fromEntries(authorization.searchParams), {
    client_id: 'kiln', response_type: 'code', code_challenge_method: 'S256', scope: 'openid email profile', redirect_uri: `${api.url}/v1/auth/sso/callback/oidc`,
  });
  for (const name of ['state', 'nonce', 'code_challenge']) t.regex(authorization.searchParams.get(name) ?? '', /^[\w-]{43,}$/, name);
  const stored = await api.pool.query('SELECT state_hash, sealed_code_verifier FROM sso_login WHERE organization_id = $1', [owner.organizationId]);
  t.is(stored.rows.length, 1);
  t.not(stored.rows[0].state_hash, authorization.searchParams.get('state'), 'the state is stored hashed');

  const email = uniqueEmail('ada');
  const back = await idp.authorize(started.location!, email);
  t.is(back.origin + back.pathname, `${api.url}/v1/auth/sso/callback/oidc`);
  const session = await api.request('GET', back.pathname + back.search);
  t.is(session.status, 200, JSON.stringify(session.body));
  t.like(session.body, { token_type: 'bearer', expires_in: 3600, user: { email, organization_id: owner.organizationId } });
  t.regex(session.body.user.id, /^usr_/);
  const membership = await api.pool.query('SELECT role FROM membership WHERE user_id = $1 AND organization_id = $2', [session.body.user.id, owner.organizationId]);
  t.deepEqual(membership.rows, [{ role: 'member' }]);
  const name = await api.pool.query('SELECT name FROM "user" WHERE id = $1', [session.body.user.id]);
  t.is(name.rows[0].name, `SSO ${email.split('@')[0]}`);

  // The session is a real one: the access token acts as a member, the refresh token rotates.
  t.is((await api.request('GET', `/v1/deployments?orgId=${owner.organizationId}`, { token: session.body.access_token })).status, 200);
  t.is((await api.request('GET', `/v1/auth/sso?orgId=${owner.organizationId}`, { token: session.body.access_token })).status, 403);
  const refreshed = await api.request('POST', '/api/auth/refresh', { body: { refresh_token: session.body.refresh_token } });
  t.is(refreshed.status, 200);

  // The second login finds the same user.
  const again = await api.request('GET', await loginAt(owner.organizationId, email));
  t.is(again.status, 200);
  t.is(again.body.user.id, session.body.user.id);
  t.is(await userCount(email), 1);
});

test('a replayed callback is refused (the state is single use), and so is a used code under a fresh state', async (t) => {
  const owner = await configured('replay');
  const email = uniqueEmail('replay');
  const callback = await loginAt(owner.organizationId, email);
  t.is((await api.request('GET', callback)).status, 200);

  const replayed = await api.request('GET', callback);
  t.is(replayed.status, 400);
  t.regex(replayed.body.message, /already used/);

  // A new login's state with the old code: the provider refuses the code.
  const fresh = new URL(await loginAt(owner.organizationId, email), api.url);
  const old = new URL(callback, api.url);
  old.searchParams.set('state', fresh.searchParams.get('state')!);
  const reused = await api.request('GET', old.pathname + old.search);
  t.is(reused.status, 401);
  t.is(reused.body.code, 'INVALID_CREDENTIALS');
  t.regex(reused.body.message, /invalid_grant/);
});

test('a wrong, expired or mismatched state is 400 and consumes nothing: the real callback still succeeds', async (t) => {
  const owner = await configured('state');
  const email = uniqueEmail('state');
  const callback = new URL(await loginAt(owner.organizationId, email), api.url);

  const forged = new URL(callback);
  forged.searchParams.set('state', 'forged-state-value-0123456789abcdefghijklmnop');
  t.is((await api.request('GET', forged.pathname + forged.search)).status, 400);
  const otherProvider = `/v1/auth/sso/callback/okta${callback.search}`;
  t.is((await api.request('GET', otherProvider)).status, 400);
  const otherOrg = (await signup(api, 'state-other')).organizationId;
  t.is((await api.request('GET', `${callback.pathname}${callback.search}&orgId=${otherOrg}`)).status, 400);
  t.is((await api.request('GET', `${callback.pathname}?code=abc`)).status, 400, 'no state at all');
  t.is((await api.request('GET', '/v1/auth/sso/callback/saml?state=x&code=y')).status, 400, 'unknown provider');

  // Still unused: the last of the failures above was refused before consuming it.
  const ok = await api.request('GET', `${callback.pathname}${callback.search}&orgId=${owner.organizationId}`);
  t.is(ok.status, 200, JSON.stringify(ok.body));

  const late = new URL(await loginAt(owner.organizationId, email), api.url);
  await api.pool.query(`UPDATE sso_login SET expires_at = now() - interval '1 second' WHERE organization_id = $1 AND used_at IS NULL`, [owner.organizationId]);
  const expired = await api.request('GET', late.pathname + late.search);
  t.is(expired.status, 400);
});

test('a foreign e-mail domain or an unverified e-mail is refused (403) and creates no user', async (t) => {
  const owner = await configured('domain');
  const outsider = uniqueEmail('mallory', 'other.test');
  const foreign = await api.request('GET', await loginAt(owner.organizationId, outsider));
  t.is(foreign.status, 403);
  t.regex(foreign.body.message, /other\.test may not sign in/);
  t.is(await userCount(outsider), 0);

  const unverified = uniqueEmail('unverified');
  idp.unverified.add(unverified);
  const res = await api.request('GET', await loginAt(owner.organizationId, unverified));
  t.is(res.status, 403);
  t.regex(res.body.message, /not verified/);
  t.is(await userCount(unverified), 0);
});

test('an identity provider cannot make a platform administrator: a JIT account with a listed address gets no admin rights', async (t) => {
  // admin@kiln.test is in the test API's KILN_ADMIN_EMAILS and has no account yet in this database.
  const owner = await configured('squat', { allowedDomains: ['kiln.test'] });
  const session = await api.request('GET', await loginAt(owner.organizationId, 'admin@kiln.test'));
  t.is(session.status, 200, JSON.stringify(session.body));
  t.is((await api.request('GET', '/v1/admin/customers', { token: session.body.access_token })).status, 403);
  t.is((await api.request('GET', `/v1/deployments?orgId=${owner.organizationId}`, { token: session.body.access_token })).status, 200, 'an ordinary member otherwise');
});

test('with JIT provisioning off an unknown user is refused; an existing member signs in', async (t) => {
  const owner = await configured('nojit', { jitProvisioning: false });
  const stranger = uniqueEmail('stranger');
  const refused = await api.request('GET', await loginAt(owner.organizationId, stranger));
  t.is(refused.status, 403);
  t.regex(refused.body.message, /No Kiln account/);
  t.is(await userCount(stranger), 0);

  // The owner signed up with an @example.com address, an allowed domain.
  const member = await api.request('GET', await loginAt(owner.organizationId, owner.email));
  t.is(member.status, 200, JSON.stringify(member.body));
  t.like(member.body.user, { id: owner.userId, email: owner.email, organization_id: owner.organizationId });
});

test('an existing account of another organization is not joined by SSO, even with JIT on', async (t) => {
  const owner = await configured('takeover');
  const other = await signup(api, 'takeover-victim');
  const res = await api.request('GET', await loginAt(owner.organizationId, other.email));
  t.is(res.status, 403);
  t.regex(res.body.message, /invitation/);
  const memberships = await api.pool.query('SELECT organization_id FROM membership WHERE user_id = $1', [other.userId]);
  t.deepEqual(memberships.rows, [{ organization_id: other.organizationId }]);
});

test('login start: 404 for an organization without SSO, 400 for a malformed organization id', async (t) => {
  const { organizationId } = await signup(api, 'nosso');
  const missing = await startLogin(api, organizationId);
  t.is(missing.status, 404);
  t.is(missing.body.message, 'SSO is not configured for this organization');
  t.is((await startLogin(api, 'not-an-org')).status, 400);
  t.is((await api.request('GET', '/v1/auth/sso/login')).status, 400);
});

test('an error from the identity provider (the user refused) is 401 naming it, and uses up the login', async (t) => {
  const owner = await configured('refused');
  const callback = new URL(await loginAt(owner.organizationId, uniqueEmail('refuser')), api.url);
  const refusal = new URLSearchParams({ state: callback.searchParams.get('state')!, iss: idp.issuer, error: 'access_denied', error_description: 'End-User aborted interaction' });
  const res = await api.request('GET', `${callback.pathname}?${refusal}`);
  t.is(res.status, 401);
  t.is(res.body.code, 'INVALID_CREDENTIALS');
  t.regex(res.body.message, /access_denied \(End-User aborted interaction\)/);
  t.is((await api.request('GET', callback.pathname + callback.search)).status, 400, 'the state was used');
});

test('the OpenAPI document describes the login start as a public 302 and the callback as public', async (t) => {
  const { paths } = (await api.request('GET', '/v1/openapi')).body;
  const start = paths['/v1/auth/sso/login'].get;
  t.deepEqual(start.security, []);
  t.truthy(start.responses['302'].headers.Location);
  t.is(start.responses['200'], undefined);
  t.deepEqual(paths['/v1/auth/sso/callback/{provider}'].get.security, []);
  t.deepEqual(paths['/v1/auth/sso'].get.security, [{ bearer: [] }]);
});

test('a stored client secret that no longer decrypts (signing key changed) is 503 with what to do, not a 500', async (t) => {
  const owner = await configured('rekeyed');
  await api.pool.query(`UPDATE sso_configuration SET sealed_client_secret = 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA' WHERE id = $1`, [owner.config.id]);
  const verified = await api.request('GET', `/v1/enterprise/sso/verify?orgId=${owner.organizationId}`, { token: owner.token });
  t.is(verified.status, 503);
  t.regex(verified.body.message, /save the configuration again/);
  t.is((await startLogin(api, owner.organizationId)).status, 503);
});
