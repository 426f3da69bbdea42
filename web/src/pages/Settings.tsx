// Settings: your profile (name; a new e-mail address stays pending until confirmed with the mailed token), your
// password (the current one asked; other sessions end) and
// the organization (name, slug, contact, default region; the plan shown, changed under Billing). Who may not
// change the organization sees its fields disabled, with the reason.
import { Link } from 'react-router';
import { api, ok, type Schemas } from '../api.ts';
import { useMyRole } from '../permissions.ts';
import { myOrganization, myProfile } from '../profile.ts';
import { readSession, saveSession, sessionFrom } from '../session.ts';
import { ErrorBanner, Field, LoadingBlock, PageHeader, SelectField, SubmitButton, useApi, useSubmit, useToast } from '../ui/index.ts';

type Region = Schemas['OrganizationSettings']['defaultRegion'];

/** The regions the API accepts (OrganizationSettings.defaultRegion), named for people. */
const REGIONS: readonly { value: Region; label: string }[] = [
  { value: 'us-east-1', label: 'US East (N. Virginia)' },
  { value: 'us-east-2', label: 'US East (Ohio)' },
  { value: 'us-west-2', label: 'US West (Oregon)' },
  { value: 'ca-central-1', label: 'Canada (Central)' },
  { value: 'sa-east-1', label: 'South America (São Paulo)' },
  { value: 'eu-west-1', label: 'Europe (Ireland)' },
  { value: 'eu-west-2', label: 'Europe (London)' },
  { value: 'eu-central-1', label: 'Europe (Frankfurt)' },
  { value: 'eu-north-1', label: 'Europe (Stockholm)' },
  { value: 'ap-south-1', label: 'Asia Pacific (Mumbai)' },
  { value: 'ap-northeast-1', label: 'Asia Pacific (Tokyo)' },
  { value: 'ap-southeast-1', label: 'Asia Pacific (Singapore)' },
  { value: 'ap-southeast-2', label: 'Asia Pacific (Sydney)' },
];

/** Each region as the select offers it: its name, then its id. */
const REGION_OPTIONS = REGIONS.map((r) => ({ value: r.value, label: `${r.label} · ${r.value}` }));

export const planLabel = (plan: string) => plan[0]!.toUpperCase() + plan.slice(1);

export function VerifyEmailForm({ initialToken = '', onVerified }: { initialToken?: string; onVerified(profile: Schemas['Profile']): void }) {
  const toast = useToast();
  const verify = useSubmit();
  const submit = verify.onSubmit(async (form) => {
    const profile = await ok(api.POST('/v1/settings/profile/verify-email', { body: { token: String(form.get('token') ?? '').trim() } }));
    toast(`Your e-mail address is now ${profile.email}`);
    onVerified(profile);
  });
  return (
    <form onSubmit={submit} noValidate className="stack">
      <ErrorBanner error={verify.error} />
      <Field label="Confirmation token" name="token" defaultValue={initialToken} required autoComplete="off" hint="From the e-mail sent to the new address; its link fills this in." error={verify.fields.token} />
      <div>
        <SubmitButton busy={verify.busy} busyLabel="Confirming…">Confirm the address</SubmitButton>
      </div>
    </form>
  );
}

/** A new password: the current one is asked; every other session ends and this tab goes on with a new one. */
function PasswordForm() {
  const toast = useToast();
  const change = useSubmit();
  const submit = change.onSubmit(async (form, element) => {
    const session = await ok(api.POST('/v1/auth/password', {
      body: { currentPassword: String(form.get('currentPassword') ?? ''), newPassword: String(form.get('newPassword') ?? '') },
    }));
    saveSession(sessionFrom(session, readSession()));
    element.reset();
    toast('Password changed: your other sessions are signed out');
  });
  return (
    <form onSubmit={submit} noValidate className="stack">
      <ErrorBanner error={change.error} />
      <Field label="Current password" name="currentPassword" type="password" autoComplete="current-password" required error={change.fields.currentPassword} />
      <Field label="New password" name="newPassword" type="password" autoComplete="new-password" required minLength={8} maxLength={256} hint="At least 8 characters. Every other session of yours is signed out." error={change.fields.newPassword} />
      <p className="muted">
        Programs should use <Link to="/settings/api-keys">API keys</Link> rather than your password: you can revoke them at any time.
      </p>
      <div>
        <SubmitButton busy={change.busy} busyLabel="Changing…">Change password</SubmitButton>
      </div>
    </form>
  );
}

export default function Settings() {
  const toast = useToast();
  const me = useMyRole();
  const profile = useApi(() => myProfile.get(), []);
  const organization = useApi(() => myOrganization.get(), []);
  /** A profile Kiln answered with (saved, or an address confirmed) is the page's and the shared one. */
  const keepProfile = (saved: Schemas['Profile']) => { profile.setData(saved); myProfile.remember(saved); };
  const canEditOrganization = me.can('organization:write');

  const saveProfile = useSubmit();
  const submitProfile = saveProfile.onSubmit(async (form) => {
    const current = profile.data!;
    const name = String(form.get('name') ?? '');
    const email = String(form.get('email') ?? '').trim();
    const body = { ...(name !== current.name ? { name } : {}), ...(email !== current.email && email !== current.pendingEmail ? { email } : {}) };
    const saved = await ok(api.POST('/v1/settings/profile', { body }));
    keepProfile(saved);
    toast(body.email ? `Profile saved: confirm ${body.email} with the link mailed to it` : 'Profile saved');
  });

  const saveOrganization = useSubmit();
  const submitOrganization = saveOrganization.onSubmit(async (form) => {
    const value = (name: string) => String(form.get(name) ?? '').trim();
    const saved = await ok(api.POST('/v1/settings/organization', {
      body: { name: value('name'), slug: value('slug'), contactEmail: value('contactEmail') || null, defaultRegion: value('defaultRegion') as Region },
    }));
    organization.setData(saved);
    myOrganization.remember(saved);
    toast('Organization saved');
  });

  const profileFields = saveProfile.fields;
  const orgFields = saveOrganization.fields;
  const org = organization.data;

  return (
    <>
      <PageHeader title="Settings" description="Your profile, and your organization's name, address and defaults." />

      <section className="card" aria-labelledby="profile-title">
        <h2 id="profile-title">Your profile</h2>
        <ErrorBanner error={profile.error} onRetry={profile.reload} />
        {!profile.data && !profile.error && <LoadingBlock lines={4} label="Loading your profile" />}
        {profile.data && (
          <form key={`${profile.data.name}|${profile.data.email}|${profile.data.pendingEmail ?? ''}`} onSubmit={submitProfile} noValidate className="stack">
            <ErrorBanner error={saveProfile.error} />
            <Field label="Name" name="name" autoComplete="name" required maxLength={200} defaultValue={profile.data.name} error={profileFields.name} />
            <Field
              label="E-mail"
              name="email"
              type="email"
              autoComplete="email"
              required
              defaultValue={profile.data.email}
              hint="A new address is used once you confirm it with the link mailed to it."
              error={profileFields.email}
            />
            <div>
              <SubmitButton busy={saveProfile.busy} busyLabel="Saving…">Save profile</SubmitButton>
            </div>
          </form>
        )}
        {profile.data?.pendingEmail && (
          <div className="banner banner-info stack-s" role="status">
            <p>
              <strong>{profile.data.pendingEmail}</strong> is waiting to be confirmed: follow the link mailed to it, or paste its token here. Until then Kiln uses{' '}
              {profile.data.email}.
            </p>
            <VerifyEmailForm onVerified={keepProfile} />
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="password-title">
        <h2 id="password-title">Password</h2>
        <PasswordForm />
      </section>

      <section className="card" aria-labelledby="organization-title">
        <h2 id="organization-title">Organization</h2>
        <ErrorBanner error={organization.error} onRetry={organization.reload} />
        {!org && !organization.error && <LoadingBlock lines={5} label="Loading the organization" />}
        {org && (
          <form key={org.slug + org.name} onSubmit={submitOrganization} noValidate className="stack">
            {!me.loading && !canEditOrganization && (
              <p className="banner banner-info" data-testid="organization-read-only">
                Your role ({me.role}) can see the organization&apos;s settings but not change them: ask an owner or admin.
              </p>
            )}
            <ErrorBanner error={saveOrganization.error} />
            <fieldset className="plain-fieldset stack" disabled={!canEditOrganization}>
              <legend className="visually-hidden">The organization&apos;s settings</legend>
              <Field label="Organization name" name="name" required maxLength={200} defaultValue={org.name} error={orgFields.name} />
              <Field
                label="Slug"
                name="slug"
                required
                minLength={3}
                maxLength={63}
                defaultValue={org.slug}
                hint="Unique across Kiln: 3 to 63 lower-case letters, digits and inner hyphens."
                error={orgFields.slug}
              />
              <Field label="Contact e-mail" name="contactEmail" type="email" defaultValue={org.contactEmail ?? ''} hint="Where Kiln writes about the organization; empty: the owners." error={orgFields.contactEmail} />
              <SelectField
                label="Default region"
                name="defaultRegion"
                defaultValue={org.defaultRegion}
                options={REGION_OPTIONS}
                hint="Where new deployments go unless they say otherwise."
                error={orgFields.defaultRegion}
              />
              <div>
                <SubmitButton busy={saveOrganization.busy} busyLabel="Saving…">Save organization</SubmitButton>
              </div>
            </fieldset>
            <p>
              Plan: <strong data-testid="plan">{planLabel(org.plan)}</strong> <span className="muted">· changed under <Link to="/billing">Billing</Link></span>
            </p>
          </form>
        )}
      </section>
    </>
  );
}
