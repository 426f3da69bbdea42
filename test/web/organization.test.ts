// The dashboard's organization pages in a real Chromium: an owner invites a viewer, who follows the mailed
// link, joins, and as a viewer sees the team but can change nothing (a forced change is refused, saying why);
// the owner manages invitations and members (confirmations first).
import test from 'ava';
import type { Page } from 'playwright-core';
import { createSmtpMailer } from '../../control-plane/mail/mailer.ts';
import { randomString } from '../../lib/ids.ts';
import { createInvoicingActivities } from '../../workflows/invoicing/activities.ts';
import { invoicingStore } from '../../workflows/invoicing/store.ts';
import { addMember, signup, validDeployment } from '../support/control-plane.ts';
import { startTestSmtp, type TestSmtp } from '../support/smtp.ts';
import { axe, PHONE, screenshot, startWebTest, type WebTestEnvironment } from './support/browser.ts';

let web: WebTestEnvironment;
let smtp: TestSmtp;
test.before(async () => {
  smtp = await startTestSmtp();
  // Links in the mail lead to kiln.example; the test follows their path on the test server.
  web = await startWebTest(import.meta.filename, {
    mail: { mailer: createSmtpMailer({ url: smtp.url, from: 'Kiln <no-reply@kiln.test>' }), publicUrl: 'https://kiln.example' },
  });
});
test.after.always(async () => {
  await web?.close();
  await smtp?.close();
});

let counter = 0;
const newAddress = (label: string) => `${label}-${++counter}-${Date.now()}@example.com`;

async function signIn(page: Page, email: string, password: string) {
  await page.goto('/sign-in');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Welcome to Kiln' }).waitFor();
}

/** The link path the invitation mail to `email` carries (the newest one). */
function invitationPath(email: string): string {
  const mails = smtp.to(email);
  const link = /https:\/\/kiln\.example(\/invite\/invite_[A-Za-z0-9_-]{43})/.exec(mails.at(-1)?.text ?? '');
  if (!link) throw new Error(`no invitation mailed to ${email}`);
  return link[1]!;
}

/** A call from the page with its own session, as a user forcing it past the dashboard would. */
const forced = (page: Page, method: string, path: string, body?: unknown) =>
  page.evaluate(async ({ method, path, body }) => {
    const session = JSON.parse(localStorage.getItem('kiln.session') ?? '{}') as { accessToken: string; organizationId: string };
    const res = await fetch(path, {
      method,
      headers: { Authorization: `Bearer ${session.accessToken}`, 'X-Organization-Id': session.organizationId, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { code?: string; message?: string } };
  }, { method, path, body });

test('an owner invites a viewer by e-mail; the viewer joins from the link and can look but not change', async (t) => {
  const owner = await signup(web.api, 'owner');
  const ownerPage = await web.page();
  await signIn(ownerPage, owner.email, owner.password);
  await ownerPage.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' }).click();
  await ownerPage.getByRole('heading', { name: 'Team', level: 1 }).waitFor();
  await ownerPage.getByRole('row', { name: /owner \d+ \(you\)/ }).waitFor();
  await ownerPage.getByRole('heading', { name: 'No open invitations' }).waitFor();

  // Each role says what it may do; the viewer is invited.
  const roles = ownerPage.getByRole('group', { name: 'Role' });
  t.regex(await roles.innerText(), /Admin[\s\S]*Member[\s\S]*Viewer[\s\S]*Changes nothing/);
  const email = newAddress('viewer');
  await ownerPage.getByLabel('E-mail').fill(email);
  await ownerPage.getByRole('radio', { name: /Viewer/ }).check();
  await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
  await ownerPage.getByText(`Invitation sent to ${email}`).waitFor();
  const pending = ownerPage.getByRole('row', { name: new RegExp(email) });
  await pending.getByText('Pending').waitFor();
  t.true(await pending.getByRole('cell', { name: 'Viewer', exact: true }).isVisible());
  await axe(t, ownerPage, 'team with an invitation');
  await screenshot(ownerPage, 'team');

  // The invitee opens the mailed link: who invites them, to what, as which role; they sign up to join.
  const viewer = await web.page();
  await viewer.goto(invitationPath(email));
  await viewer.getByRole('heading', { name: 'Join an organization on Kiln' }).waitFor();
  await viewer.getByText(/invited .* to join owner org \d+ as viewer/).waitFor();
  await axe(t, viewer, 'accepting an invitation');
  await screenshot(viewer, 'accept-invitation');
  await viewer.getByLabel('Your name').fill('Vera Viewer');
  await viewer.getByLabel('Password').fill('a viewer password');
  await viewer.getByRole('button', { name: 'Create account and join' }).click();
  await viewer.getByRole('heading', { name: 'Welcome to Kiln' }).waitFor();
  await viewer.getByRole('banner').getByText(/owner org \d+/).waitFor();

  // The link worked once.
  const again = await web.page();
  await again.goto(invitationPath(email));
  await again.getByRole('alert').getByText('This invitation link does not work any more').waitFor();

  // As a viewer: the team is there, with nothing to change it.
  await viewer.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' }).click();
  await viewer.getByRole('row', { name: /Vera Viewer \(you\)/ }).getByRole('cell', { name: 'Viewer', exact: true }).waitFor();
  await viewer.getByRole('row', { name: /owner \d+/ }).waitFor();
  await viewer.getByTestId('read-only-note').waitFor();
  t.is(await viewer.getByRole('button', { name: 'Send invitation' }).count(), 0);
  t.is(await viewer.getByRole('button', { name: /^Remove / }).count(), 0);
  t.is(await viewer.getByRole('combobox', { name: /^Role of / }).count(), 0);
  await axe(t, viewer, 'team as a viewer');
  await screenshot(viewer, 'team-viewer');

  // Forced past the dashboard, the API refuses and says why.
  const refused = await forced(viewer, 'POST', '/v1/team/invite', { email: newAddress('sneaky'), role: 'admin' });
  t.is(refused.status, 403);
  t.is(refused.body.code, 'INSUFFICIENT_PERMISSIONS');
  t.regex(refused.body.message ?? '', /team:write|permission|role/i);

  // The deployments list too, with nothing offered to deploy; a forced deployment is refused.
  const created = await web.api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('shared-chat') });
  t.is(created.status, 201);
  await viewer.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Deployments' }).click();
  await viewer.getByRole('row', { name: /shared-chat/ }).waitFor();
  t.is(await viewer.getByRole('link', { name: 'New deployment' }).count(), 0);
  await axe(t, viewer, 'deployments as a viewer');
  const deployRefused = await forced(viewer, 'POST', '/v1/deployments', validDeployment('sneaky'));
  t.is(deployRefused.status, 403);
  t.regex(deployRefused.body.message ?? '', /deployments:write|permission|role/i);

  // Billing is not the viewer's: the page says so, with nothing to buy or change.
  await viewer.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Billing' }).click();
  await viewer.getByTestId('billing-not-allowed').getByText('owners and admins only').waitFor();
  t.is(await viewer.getByRole('button', { name: /Buy credits|Upgrade|Move to/ }).count(), 0);
  await axe(t, viewer, 'billing as a viewer');

  // The organization's settings are shown disabled, with the reason; forced, the API's refusal is shown.
  await viewer.goto('/settings/general');
  await viewer.getByTestId('organization-read-only').waitFor();
  const orgName = viewer.getByLabel('Organization name');
  t.true(await orgName.isDisabled());
  t.true(await viewer.getByRole('button', { name: 'Save organization' }).isDisabled());
  await axe(t, viewer, 'settings as a viewer');
  await viewer.locator('fieldset.plain-fieldset').evaluate((fieldset) => fieldset.removeAttribute('disabled'));
  await orgName.fill('Taken over');
  await viewer.getByRole('button', { name: 'Save organization' }).click();
  await viewer.getByRole('alert').getByText('Your role does not allow this').waitFor();
  const stillNamed = await web.api.request('GET', `/v1/settings/organization?orgId=${owner.organizationId}`, { token: owner.token });
  t.regex(stillNamed.body.name as string, /^owner org \d+$/);

  // The owner sees the new member and the invitation answered.
  await ownerPage.reload();
  await ownerPage.getByRole('row', { name: /Vera Viewer/ }).waitFor();
  await ownerPage.getByRole('heading', { name: 'No open invitations' }).waitFor();
});

test('the owner resends and revokes an invitation, changes a member\'s role and removes them, each after confirming', async (t) => {
  const owner = await signup(web.api, 'manager');
  const member = await addMember(web.api, owner.organizationId, 'member', 'mia');
  const page = await web.page();
  await signIn(page, owner.email, owner.password);
  await page.goto('/team');

  const email = newAddress('later');
  await page.getByLabel('E-mail').fill(email);
  await page.getByRole('button', { name: 'Send invitation' }).click();
  const row = page.getByRole('row', { name: new RegExp(email) });
  await row.waitFor();
  const firstLink = invitationPath(email);

  // Resend: a new link, the old one dead.
  await page.getByRole('button', { name: `Resend the invitation to ${email}` }).click();
  const resend = page.getByRole('dialog', { name: `Resend the invitation to ${email}?` });
  await resend.getByRole('button', { name: 'Resend invitation' }).click();
  await page.getByText(`Invitation resent to ${email}`).waitFor();
  t.is(smtp.to(email).length, 2);
  const secondLink = invitationPath(email);
  t.not(secondLink, firstLink);

  // Revoke: asked first; cancel keeps it.
  await page.getByRole('button', { name: `Revoke the invitation to ${email}` }).click();
  const revoke = page.getByRole('dialog', { name: `Revoke the invitation to ${email}?` });
  await revoke.waitFor();
  await axe(t, page, 'the revoke-invitation confirmation');
  await revoke.getByRole('button', { name: 'Cancel' }).click();
  await revoke.waitFor({ state: 'hidden' });
  t.true(await row.isVisible());
  await page.getByRole('button', { name: `Revoke the invitation to ${email}` }).click();
  await revoke.getByRole('button', { name: 'Revoke invitation' }).click();
  await page.getByText(`Invitation to ${email} revoked`).waitFor();
  await page.getByRole('heading', { name: 'No open invitations' }).waitFor();
  const invitee = await web.page();
  await invitee.goto(secondLink);
  await invitee.getByRole('alert').getByText('This invitation link does not work any more').waitFor();

  // An invitee may decline, after confirming; the invitation leaves the open list.
  const declining = newAddress('declining');
  await page.getByLabel('E-mail').fill(declining);
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await page.getByRole('row', { name: new RegExp(declining) }).waitFor();
  await invitee.goto(invitationPath(declining));
  await invitee.getByRole('button', { name: 'Decline the invitation' }).click();
  const decline = invitee.getByRole('dialog', { name: 'Decline the invitation?' });
  await axe(t, invitee, 'declining an invitation');
  await decline.getByRole('button', { name: 'Decline', exact: true }).click();
  await invitee.getByText('You declined the invitation').waitFor();
  await page.reload();
  await page.getByRole('heading', { name: 'No open invitations' }).waitFor();

  // The member becomes an admin.
  const roleSelect = page.getByRole('combobox', { name: /^Role of mia/ });
  await roleSelect.selectOption('admin');
  await page.getByText(/is now admin/).waitFor();
  const assigned = await web.api.request('GET', `/v1/enterprise/assignments`, { token: owner.token });
  t.is((assigned.body as Array<{ userId: string; roleId: string }>).find((a) => a.userId === member.userId)?.roleId, 'admin');

  // Removing asks first.
  await page.getByRole('button', { name: /^Remove mia/ }).click();
  const remove = page.getByRole('dialog', { name: /^Remove mia/ });
  await remove.getByRole('button', { name: 'Remove member' }).click();
  await page.getByText(/mia.* removed/).waitFor();
  await page.getByRole('row', { name: /mia/ }).waitFor({ state: 'detached' });
  const left = await web.api.request('GET', '/v1/team/members', { token: owner.token });
  t.false((left.body as Array<{ userId: string }>).some((m) => m.userId === member.userId), 'no longer a member');

  const phone = await web.page(PHONE);
  await signIn(phone, owner.email, owner.password);
  await phone.goto('/team');
  await phone.getByRole('row', { name: /manager \d+ \(you\)/ }).waitFor();
  t.true(await phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the team page fits a phone');
  await screenshot(phone, 'phone-team');
  const dark = await web.page({ colorScheme: 'dark' });
  await signIn(dark, owner.email, owner.password);
  await dark.goto('/team');
  await dark.getByRole('row', { name: /manager \d+ \(you\)/ }).waitFor();
  await axe(t, dark, 'team in dark mode');
  await screenshot(dark, 'dark-team');
});

test('the owner\'s settings: a bad slug is refused at its field, good values are saved, a new e-mail address is confirmed from its link', async (t) => {
  const owner = await signup(web.api, 'settings');
  const page = await web.page();
  await signIn(page, owner.email, owner.password);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Profile and organization' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  t.is(await page.getByTestId('plan').innerText(), 'Free');

  const slug = page.getByLabel('Slug');
  await slug.fill('Not A Slug!');
  await page.getByRole('button', { name: 'Save organization' }).click();
  await page.locator('.field-invalid .field-error').getByText(/lower-case letters/).waitFor();
  t.is(await slug.getAttribute('aria-invalid'), 'true');
  await axe(t, page, 'settings with a field error');
  await screenshot(page, 'settings-slug-error');

  const newSlug = `engines-${Date.now()}`;
  await page.getByLabel('Organization name').fill('Difference Engines');
  await slug.fill(newSlug);
  await page.getByLabel('Contact e-mail').fill('ops@example.com');
  await page.getByLabel('Default region').selectOption('eu-central-1');
  await page.getByRole('button', { name: 'Save organization' }).click();
  await page.getByText('Organization saved').waitFor();
  const saved = await web.api.request('GET', `/v1/settings/organization?orgId=${owner.organizationId}`, { token: owner.token });
  t.like(saved.body, { name: 'Difference Engines', slug: newSlug, contactEmail: 'ops@example.com', defaultRegion: 'eu-central-1' });
  await page.reload();
  t.is(await page.getByLabel('Slug').inputValue(), newSlug);

  // A new address waits for its confirmation; the mailed link confirms it.
  const address = newAddress('renamed');
  await page.getByLabel('E-mail', { exact: true }).fill(address);
  await page.getByRole('button', { name: 'Save profile' }).click();
  await page.getByRole('status').getByText(`${address} is waiting to be confirmed`).waitFor();
  await screenshot(page, 'settings');
  const link = /https:\/\/kiln\.example(\/settings\/profile\/verify-email\?token=\S+)/.exec(smtp.to(address).at(-1)?.text ?? '');
  t.truthy(link, 'the confirmation mail carries a link');
  await page.goto(link![1]!);
  await page.getByRole('button', { name: 'Confirm the address' }).click();
  await page.getByText(`Confirmed: Kiln now uses ${address}`).waitFor();

  for (const [name, options] of [['phone-settings', PHONE], ['dark-settings', { colorScheme: 'dark' as const }]] as const) {
    const other = await web.page(options);
    await signIn(other, address, owner.password);
    await other.goto('/settings/general');
    await other.getByLabel('Slug').waitFor();
    await axe(t, other, name);
    await screenshot(other, name);
  }
});

test('settings: a password change refuses a wrong current password at its field, then signs other sessions out and keeps this one', async (t) => {
  const user = await signup(web.api, 'rekeyed');
  const page = await web.page();
  await signIn(page, user.email, user.password);
  const elsewhere = await web.page();
  await signIn(elsewhere, user.email, user.password);
  await page.goto('/settings/general');
  const current = page.getByLabel('Current password');
  const next = page.getByLabel('New password');

  await current.fill('not my password');
  await next.fill('a passphrase of my own');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.locator('.field-invalid .field-error').getByText('is not your current password').waitFor();
  t.is(await current.getAttribute('aria-invalid'), 'true');
  await axe(t, page, 'a wrong current password');

  await current.fill(user.password);
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('Password changed: your other sessions are signed out').waitFor();
  t.is(await current.inputValue(), '', 'the form is emptied');
  t.is((await web.api.request('POST', '/v1/auth/signin', { body: { email: user.email, password: 'a passphrase of my own' } })).status, 200);
  // This tab holds the new session: it refreshes with it. The other tab's refresh token is revoked.
  const refreshWith = (tab: Page) => tab.evaluate(() => JSON.parse(localStorage.getItem('kiln.session')!).refreshToken as string);
  t.is((await web.api.request('POST', '/api/auth/refresh', { body: { refresh_token: await refreshWith(page) } })).status, 200);
  t.is((await web.api.request('POST', '/api/auth/refresh', { body: { refresh_token: await refreshWith(elsewhere) } })).status, 401);
  await screenshot(page, 'settings-password-changed');
});

test('billing: usage, credits and their history, the plans, an invoice downloaded as a PDF; buying says payments are not set up here', async (t) => {
  const owner = await signup(web.api, 'payer');
  // On the startup plan since before September 2026, so September's invoice carries the plan fee.
  await web.api.pool.query(`UPDATE organization SET created_at = '2025-01-01', plan = 'startup' WHERE id = $1`, [owner.organizationId]);
  await createInvoicingActivities({ store: invoicingStore(web.api.orm) }).issueInvoices({ month: '2026-09', force: false });
  const page = await web.page();
  await signIn(page, owner.email, owner.password);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Billing' }).click();
  await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();

  // The free grant is the balance and the history's one line.
  await page.locator('.stat', { hasText: 'Credits balance' }).getByText('$25.00').waitFor();
  const history = page.getByRole('table', { name: 'Credit history' });
  await history.getByRole('row').nth(1).waitFor();
  t.is(await history.getByRole('row').count(), 2);
  t.regex(await history.innerText(), /\+\$25\.00/);
  await page.getByRole('heading', { name: 'No GPU time this month' }).waitFor();
  t.true(await page.getByRole('listitem').filter({ hasText: 'Startup' }).getByText('Current plan').isVisible());

  // The invoice, downloaded with the session as a PDF.
  const invoiceRow = page.getByRole('row', { name: /KILN-.*-0001/ });
  await invoiceRow.getByText('$49.00').waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), invoiceRow.getByRole('button', { name: /Download KILN-.* as PDF/ }).click()]);
  t.regex(download.suggestedFilename(), /^KILN-.*-0001\.pdf$/);
  const path = await download.path();
  const { readFile } = await import('node:fs/promises');
  t.is((await readFile(path)).subarray(0, 5).toString(), '%PDF-');
  await axe(t, page, 'billing');
  await screenshot(page, 'billing');

  // Upgrading goes through checkout, which this Kiln has no payment provider for: it says so.
  await page.getByRole('button', { name: 'Upgrade to Growth' }).click();
  const dialog = page.getByRole('dialog', { name: 'Change to the Growth plan?' });
  await dialog.getByRole('button', { name: 'Continue to payment' }).click();
  await dialog.getByRole('alert').getByText('Payments are not set up on this Kiln').waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Buy credits' }).click();
  await page.getByRole('alert').getByText('Payments are not set up on this Kiln').waitFor();

  for (const [name, options] of [['phone-billing', PHONE], ['dark-billing', { colorScheme: 'dark' as const }]] as const) {
    const other = await web.page(options);
    await signIn(other, owner.email, owner.password);
    await other.goto('/billing');
    await other.getByRole('row', { name: /KILN-.*-0001/ }).waitFor();
    t.true(await other.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name} fits`);
    await axe(t, other, name);
    await screenshot(other, name);
  }
});

/** A notification for `user`, written as the worker writes them. */
async function notify(user: { userId: string; organizationId: string }, payload: Record<string, unknown>, kind = 'deployment.failed') {
  await web.api.pool.query(
    `insert into user_notification (id, created_at, user_id, organization_id, kind, payload) values ($1, now(), $2, $3, $4, $5::jsonb)`,
    [`unt_${randomString(20)}`, user.userId, user.organizationId, kind, JSON.stringify(payload)]);
}

test('notifications: unread first with a live count in the header, marked read one and all, preferences per kind', async (t) => {
  const owner = await signup(web.api, 'notified');
  await notify(owner, { message: 'Deployment chat failed.', deploymentId: 'dep_x', deploymentName: 'chat', status: 'failed', reason: 'image pull error' });
  await notify(owner, { message: 'Deployment embed failed.', deploymentId: 'dep_y', deploymentName: 'embed', status: 'failed', reason: 'out of memory' });
  const page = await web.page();
  await signIn(page, owner.email, owner.password);
  const bell = page.getByRole('link', { name: /^Notifications/ }).first();
  await page.getByRole('banner').getByRole('link', { name: 'Notifications, 2 unread' }).waitFor();

  // One arrives while the page is open: the header counts it without a reload.
  await page.getByText('Live', { exact: true }).waitFor();
  await notify(owner, { message: 'Deployment rag failed.', deploymentId: 'dep_z', deploymentName: 'rag', status: 'failed', reason: 'quota' });
  await page.getByRole('banner').getByRole('link', { name: 'Notifications, 3 unread' }).waitFor();
  await bell.click();
  await page.getByRole('heading', { name: 'Unread: 3' }).waitFor();
  await axe(t, page, 'notifications');
  await screenshot(page, 'notifications');

  const items = page.getByRole('list', { name: 'Notifications' }).getByRole('listitem');
  t.is(await items.count(), 3);
  await items.first().getByRole('button', { name: /^Mark .* read$/ }).click();
  await page.getByRole('heading', { name: 'Unread: 2' }).waitFor();
  await page.getByRole('banner').getByRole('link', { name: 'Notifications, 2 unread' }).waitFor();
  await page.getByRole('button', { name: 'Mark all read' }).click();
  await page.getByText('2 notifications marked read').waitFor();
  await page.getByRole('heading', { name: 'All read' }).waitFor();
  await page.getByRole('banner').getByRole('link', { name: 'Notifications', exact: true }).waitFor();
  t.true(await page.getByRole('button', { name: 'Mark all read' }).isDisabled());

  // Preferences: e-mail for failed deployments on, announcements off in the app; they stay.
  const mailFailed = page.getByRole('checkbox', { name: 'A deployment failed: by e-mail' });
  t.false(await mailFailed.isChecked());
  const saving = page.locator('input[aria-busy="true"]');
  await mailFailed.check();
  await saving.waitFor({ state: 'detached' });
  await page.getByRole('checkbox', { name: 'Announcements from Kiln: in the app' }).uncheck();
  await saving.waitFor({ state: 'detached' });
  await page.reload();
  await page.getByRole('checkbox', { name: 'A deployment failed: by e-mail' }).waitFor();
  t.true(await page.getByRole('checkbox', { name: 'A deployment failed: by e-mail' }).isChecked());
  t.false(await page.getByRole('checkbox', { name: 'Announcements from Kiln: in the app' }).isChecked());

  for (const [name, options] of [['phone-notifications', PHONE], ['dark-notifications', { colorScheme: 'dark' as const }]] as const) {
    const other = await web.page(options);
    await signIn(other, owner.email, owner.password);
    await other.goto('/notifications');
    await other.getByRole('heading', { name: 'All read' }).waitFor();
    await axe(t, other, name);
    await screenshot(other, name);
  }
});

test('home shows the getting-started checklist: creating an API key ticks its step; a step skipped, the list dismissed and brought back', async (t) => {
  const owner = await signup(web.api, 'newcomer');
  const page = await web.page();
  await signIn(page, owner.email, owner.password);
  const checklist = page.getByRole('list', { name: 'Getting-started steps' });
  const keyStep = checklist.locator('[data-step="create_api_key"]');
  await keyStep.getByText('(to do)').waitFor();
  const before = await page.locator('#onboarding-progress').innerText();
  await axe(t, page, 'home with the checklist');
  await screenshot(page, 'home-checklist');

  // Its link leads to where the step is done; done, the step is ticked on Home.
  await keyStep.getByRole('link', { name: 'Create a key' }).click();
  await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  await page.getByLabel('Name').fill('first');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByTestId('new-key-value').waitFor();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Home' }).click();
  await keyStep.getByText('(done)').waitFor();
  const after = await page.locator('#onboarding-progress').innerText();
  t.is(Number(/^(\d+)/.exec(after)![1]), Number(/^(\d+)/.exec(before)![1]) + 1);

  // Skip a step, then dismiss; the list is offered again and comes back with no step skipped.
  await checklist.locator('[data-step="set_budget"]').getByRole('button', { name: /^Skip/ }).click();
  await checklist.locator('[data-step="set_budget"]').getByText('(skipped)').waitFor();
  await page.getByRole('button', { name: 'Dismiss' }).click();
  await page.getByRole('button', { name: 'Show the checklist again' }).click();
  await checklist.locator('[data-step="set_budget"]').getByText('(to do)').waitFor();

  for (const [name, options] of [['phone-home-checklist', PHONE], ['dark-home-checklist', { colorScheme: 'dark' as const }]] as const) {
    const other = await web.page(options);
    await signIn(other, owner.email, owner.password);
    await other.getByRole('list', { name: 'Getting-started steps' }).waitFor();
    t.true(await other.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name} fits`);
    await axe(t, other, name);
    await screenshot(other, name);
  }
});
