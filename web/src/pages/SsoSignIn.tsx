// Single sign-on: the organization's identity provider signs the user in. The API sends the browser there
// (GET /v1/auth/sso/login?orgId=) and, once back, here with the session in the URL's fragment.
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { saveSession, sessionFrom } from '../session.ts';
import { ErrorBanner, Field, LoadingBlock, SubmitButton, useSubmit } from '../ui/index.ts';

const NEXT_KEY = 'kiln.sso.next';
const ORG_ID = /^org_[0-9A-Za-z]{1,64}$/;

/** The session the API put in the fragment, if this is the way back from the identity provider. */
function sessionInFragment(hash: string) {
  const values = new URLSearchParams(hash.replace(/^#/, ''));
  const get = (name: string) => values.get(name) ?? '';
  if (!get('access_token') || !get('refresh_token')) return undefined;
  return sessionFrom({
    access_token: get('access_token'), refresh_token: get('refresh_token'), expires_in: Number(get('expires_in')) || 3600,
    user: { id: get('user_id'), email: get('email'), organization_id: get('organization_id') },
  });
}

export default function SsoSignIn() {
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [returning] = useState(() => sessionInFragment(window.location.hash));
  const [orgIdError, setOrgIdError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const { busy, error, setError, run } = useSubmit();

  useEffect(() => {
    if (!returning) return;
    // The tokens leave the address bar and the history at once.
    window.history.replaceState(null, '', window.location.pathname);
    saveSession(returning);
    const next = sessionStorage.getItem(NEXT_KEY) ?? '/';
    sessionStorage.removeItem(NEXT_KEY);
    navigate(next.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
  }, [returning, navigate]);

  const start = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const orgId = String(new FormData(event.currentTarget).get('orgId') ?? '').trim();
    setOrgIdError(undefined);
    setNotice(undefined);
    setError(undefined);
    if (!ORG_ID.test(orgId)) {
      setOrgIdError('Enter your organization’s ID, e.g. org_0123456789abcdefghij (your administrator has it).');
      return;
    }
    const url = `/v1/auth/sso/login?orgId=${encodeURIComponent(orgId)}`;
    await run(async () => {
      // Ask first whether the organization has an identity provider: a redirect means yes. This one probe is
      // plain fetch, since the SDK's client treats a redirect it must not follow as a failure.
      const probe = await fetch(url, { redirect: 'manual' });
      if (probe.type === 'opaqueredirect') {
        const next = params.get('next');
        if (next) sessionStorage.setItem(NEXT_KEY, next);
        window.location.assign(url);
        return 'leaving';
      }
      if (probe.status !== 404) throw new Error(`Single sign-on is not available right now (HTTP ${probe.status}): try again in a minute.`);
      setNotice('This organization has no single sign-on set up: sign in with your e-mail and password, or ask its administrator.');
    });
  };

  if (returning) return <LoadingBlock label="Signing you in" />;
  return (
    <main className="auth-card">
      <h1>Sign in with SSO</h1>
      <p className="muted">Your organization’s identity provider (Okta, Azure AD, Google, any OpenID Connect provider) signs you in.</p>
      <form onSubmit={(e) => void start(e)} noValidate className="stack">
        <ErrorBanner error={error} />
        {notice && (
          <div className="banner banner-error" role="alert">
            <p>{notice}</p>
          </div>
        )}
        <Field label="Organization ID" name="orgId" defaultValue={params.get('orgId') ?? ''} autoComplete="off" spellCheck={false} required error={orgIdError} />
        <SubmitButton busy={busy} busyLabel="Checking…">Continue</SubmitButton>
      </form>
      <p className="muted">
        <Link to="/sign-in">Sign in with e-mail and password</Link>
      </p>
    </main>
  );
}
