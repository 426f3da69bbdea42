// The dashboard in a real Chromium: sign up, sign in (and SSO through a real OpenID provider), an API key
// created (its value shown once, copied, and working against the API), revoked after a confirmation; field
// errors; the shell on a phone; dark mode.
import test from 'ava';
import type { Page } from 'playwright-core';
import { signup } from '../support/control-plane.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-provider.ts';
import { axe, PHONE, screenshot, startWebTest, type WebTestEnvironment } from './support/browser.ts';

let web: WebTestEnvironment;
let idp: TestIdp;
let ssoEmail = '';
test.before(async () => {
  web = await startWebTest(import.meta.filename);
  idp = await startTestIdp({ redirect_uris: [`${web.api.url}/v1/auth/sso/callback/oidc`] }, { defaultLogin: () => ssoEmail });
});
test.after.always(async () => {
  await idp?.close();
  await web?.close();
});

let counter = 0;
const newUser = () => {
  counter += 1;
  return { name: `Ada ${counter}`, organization: `Engines ${counter}`, email: `ada-${counter}-${Date.now()}@example.com`, password: 'correct horse battery' };
};

async function signUpThroughTheForm(page: Page, user: ReturnType<typeof newUser>) {
  await page.getByLabel('Your name').fill(user.name);
  await page.getByLabel('Organization').fill(user.organization);
  await page.getByLabel('E-mail').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Create account' }).click();
}

async function signInThroughTheForm(page: Page, email: string, password: string) {
  await page.goto('/sign-in');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Welcome to Kiln' }).waitFor();
}

/** A call with an API key, as curl would make it. */
const callWith = (key: string, path: string) => fetch(`${web.api.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });

test('sign up, sign in, create an API key (shown once, copied, working), revoke it after confirming', async (t) => {
  const page = await web.page();
  const user = newUser();

  // Signed out, any page leads to sign-in, which links to sign-up.
  await page.goto('/settings/api-keys');
  await page.getByRole('heading', { name: 'Sign in to Kiln' }).waitFor();
  t.regex(page.url(), /\/sign-in\?next=%2Fsettings%2Fapi-keys$/);
  await axe(t, page, 'sign-in');
  await screenshot(page, 'sign-in');
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByRole('heading', { name: 'Create your Kiln account' }).waitFor();
  await axe(t, page, 'sign-up');
  await screenshot(page, 'sign-up');
  await signUpThroughTheForm(page, user);

  // Signed up, the page first asked for opens, with the organization and the user in the header.
  await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  await page.getByRole('banner').getByText(user.organization).waitFor();
  t.true(await page.getByRole('banner').getByText(user.email).isVisible());

  // Sign out, then in again.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to Kiln' }).waitFor();
  await signInThroughTheForm(page, user.email, user.password);
  await axe(t, page, 'home');
  await screenshot(page, 'home');

  // API keys, from the navigation; none yet.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('heading', { name: 'No API keys yet' }).waitFor();
  await axe(t, page, 'API keys, empty');
  await screenshot(page, 'api-keys-empty');

  // Each scope says what it may do; a deployments-only key is created.
  const scopes = page.getByRole('group', { name: 'Scope' });
  t.regex(await scopes.innerText(), /Full access[\s\S]*billing[\s\S]*Deployments only[\s\S]*No billing[\s\S]*Read only[\s\S]*No changes/);
  await page.getByLabel('Name').fill('ci');
  await page.getByRole('radio', { name: /Deployments only/ }).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  const value = page.getByTestId('new-key-value');
  await value.waitFor();
  const key = (await value.innerText()).trim();
  t.regex(key, /^sk_(test|live)_\w+/);
  t.true(await page.getByText('it will not be shown again').isVisible());
  // The organization's id is on the page, and the CLI's login with it (the key goes in on stdin).
  const session = await page.evaluate(() => JSON.parse(localStorage.getItem('kiln.session') ?? '{}') as { organizationId: string });
  t.is(await page.getByTestId('organization-id').innerText(), session.organizationId);
  t.is(await page.getByTestId('cli-login').innerText(), `kiln login --api-key-stdin --org ${session.organizationId} --server ${new URL(page.url()).origin}`);
  await page.getByRole('row', { name: /ci/ }).getByText('Deployments only').waitFor();
  await axe(t, page, 'API keys, a key just created');
  await screenshot(page, 'api-keys-created');

  // Copied with the button, it is the same value.
  await page.getByRole('button', { name: 'Copy key' }).click();
  await page.getByRole('button', { name: 'Copied', exact: true }).waitFor();
  t.is(await page.evaluate(() => navigator.clipboard.readText()), key);

  // The key works against the API, within its scope.
  const orgId = await page.evaluate(() => (JSON.parse(localStorage.getItem('kiln.session') ?? '{}') as { organizationId: string }).organizationId);
  t.is((await callWith(key, `/v1/deployments?orgId=${orgId}`)).status, 200);
  t.is((await callWith(key, `/v1/credits?orgId=${orgId}`)).status, 403, 'a deployments-only key reads no billing');

  // Dismissed or reloaded, the value is gone for good.
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await page.reload();
  await page.getByRole('row', { name: /ci/ }).waitFor();
  t.false((await page.content()).includes(key));

  // Revoking asks first; cancelling keeps the key.
  await page.getByRole('button', { name: 'Revoke ci' }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke “ci”?' });
  await dialog.waitFor();
  await axe(t, page, 'the revoke confirmation');
  await screenshot(page, 'api-keys-revoke-confirm', { fullPage: false });
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  t.is((await callWith(key, `/v1/deployments?orgId=${orgId}`)).status, 200);

  await page.getByRole('button', { name: 'Revoke ci' }).click();
  await dialog.getByRole('button', { name: 'Revoke key' }).click();
  await page.getByText('Key “ci” revoked').waitFor();
  await page.getByRole('heading', { name: 'No API keys yet' }).waitFor();
  t.is((await callWith(key, `/v1/deployments?orgId=${orgId}`)).status, 401);
});

test('bad input shows the field\'s error beside it, and a wrong password says what to do', async (t) => {
  const page = await web.page();
  await page.goto('/sign-up');
  const user = { ...newUser(), email: 'not-an-address' };
  await signUpThroughTheForm(page, user);
  const email = page.getByLabel('E-mail');
  await page.locator('.field-error').first().waitFor();
  t.is(await email.getAttribute('aria-invalid'), 'true');
  const description = await email.evaluate((input) => input.getAttribute('aria-describedby')?.split(' ').map((id) => document.getElementById(id)?.textContent).join(' '));
  t.regex(description ?? '', /email/i, 'the error is tied to the field for screen readers');
  await page.getByRole('alert').getByText('Correct the highlighted field').waitFor();
  await axe(t, page, 'sign-up with an error');
  await screenshot(page, 'sign-up-field-error');

  // A key without a name.
  const account = await signup(web.api, 'fields');
  await signInThroughTheForm(page, account.email, account.password);
  await page.goto('/settings/api-keys');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('.field-error').first().waitFor();
  t.is(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');

  // A wrong password.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('E-mail').fill(account.email);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').getByText('Check the e-mail address and password').waitFor();
  t.pass();
});

test('on a phone the navigation is a menu that opens, leads to a page and closes', async (t) => {
  const page = await web.page(PHONE);
  const account = await signup(web.api, 'phone');
  await signInThroughTheForm(page, account.email, account.password);
  const nav = page.getByRole('navigation', { name: 'Main' });
  const menu = page.getByRole('button', { name: 'Menu' });
  t.false(await nav.isVisible(), 'the navigation is folded away');
  t.is(await menu.getAttribute('aria-expanded'), 'false');
  t.true(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'nothing wider than the phone');
  await axe(t, page, 'home on a phone');
  await screenshot(page, 'phone-home');

  await menu.click();
  await nav.waitFor();
  t.is(await menu.getAttribute('aria-expanded'), 'true');
  await screenshot(page, 'phone-menu-open', { fullPage: false });
  await nav.getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  await nav.waitFor({ state: 'hidden' });
  t.true(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the API keys page fits the phone');
  await axe(t, page, 'API keys on a phone');
  await screenshot(page, 'phone-api-keys');
});

test('dark mode follows the system', async (t) => {
  const page = await web.page({ colorScheme: 'dark' });
  const account = await signup(web.api, 'dark');
  await signInThroughTheForm(page, account.email, account.password);
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const [r, g, b] = (background.match(/\d+/g) ?? []).map(Number);
  t.true((r ?? 255) + (g ?? 255) + (b ?? 255) < 3 * 60, `a dark background, not ${background}`);
  await axe(t, page, 'home in dark mode');
  await screenshot(page, 'dark-home');
  await page.goto('/settings/api-keys');
  await page.getByRole('heading', { name: 'No API keys yet' }).waitFor();
  await axe(t, page, 'API keys in dark mode');
  await screenshot(page, 'dark-api-keys');
});

test('SSO: an organization with an identity provider signs its member in through it; one without says to use the password', async (t) => {
  const owner = await signup(web.api, 'sso-owner');
  const configured = await web.api.request('POST', '/v1/auth/sso', {
    token: owner.token,
    body: { provider: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, allowedDomains: ['corp.test'], defaultRole: 'member', jitProvisioning: true },
  });
  t.is(configured.status, 201);
  const other = await signup(web.api, 'no-sso');
  const email = `sso-${Date.now()}@corp.test`;

  // The test provider signs in ssoEmail, as a person would at its login form; its certificate is self-signed.
  ssoEmail = email;
  const page = await web.page({ ignoreHTTPSErrors: true });

  await page.goto('/sign-in');
  await page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await page.getByRole('heading', { name: 'Sign in with SSO' }).waitFor();
  await page.getByLabel('Organization ID').fill(other.organizationId);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('alert').getByText('no single sign-on set up').waitFor();
  await axe(t, page, 'SSO sign-in');
  await screenshot(page, 'sso-not-configured');

  await page.getByLabel('Organization ID').fill(owner.organizationId);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Welcome to Kiln' }).waitFor();
  await page.getByRole('banner').getByText(email).waitFor();
  t.false(page.url().includes('access_token'), 'the tokens left the address bar');
  t.is(new URL(page.url()).pathname, '/');
});

test('the header says when updates are live, and an announcement pushed to the organization shows at once', async (t) => {
  const page = await web.page();
  const owner = await signup(web.api, 'live');
  await signInThroughTheForm(page, owner.email, owner.password);
  // The socket opened with a single-use ticket (POST /v1/ws/tickets), as a browser must.
  await page.getByRole('banner').getByRole('status').getByText('Live', { exact: true }).waitFor();
  const pushed = await web.api.request('POST', '/v1/notifications/ws', { token: owner.token, body: { title: 'Maintenance', message: 'GPU nodes restart at 18:00 UTC' } });
  t.is(pushed.status, 200);
  await page.getByText('Maintenance: GPU nodes restart at 18:00 UTC').waitFor();
  await screenshot(page, 'live-announcement', { fullPage: false });
});

test('an access token Kiln refuses is renewed with the refresh token; a session that cannot be renewed leads to sign-in and back', async (t) => {
  const page = await web.page();
  const account = await signup(web.api, 'session');
  await signInThroughTheForm(page, account.email, account.password);
  const stored = () => page.evaluate(() => JSON.parse(localStorage.getItem('kiln.session') ?? 'null') as { accessToken: string; refreshToken: string });
  const tamper = (tokens: { accessToken?: string; refreshToken?: string }) => page.evaluate((change) => {
    localStorage.setItem('kiln.session', JSON.stringify({ ...JSON.parse(localStorage.getItem('kiln.session')!), ...change }));
  }, tokens);
  const before = await stored();

  // As after the access token's hour: the calls are refused once, the session renewed, the page shown.
  await tamper({ accessToken: 'expired' });
  await page.goto('/settings/api-keys');
  await page.getByRole('heading', { name: 'No API keys yet' }).waitFor();
  const after = await stored();
  t.not(after.accessToken, 'expired');
  t.not(after.refreshToken, before.refreshToken, 'the refresh token rotated (once, though several calls were refused at once)');

  // Neither token good any more: sign-in, then back to the page asked for.
  await tamper({ accessToken: 'revoked', refreshToken: 'revoked' });
  await page.goto('/settings/api-keys');
  await page.getByRole('heading', { name: 'Sign in to Kiln' }).waitFor();
  t.regex(page.url(), /next=%2Fsettings%2Fapi-keys/);
  await page.getByLabel('E-mail').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
});
