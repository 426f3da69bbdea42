// Sign in with e-mail and password; SSO for organizations whose identity provider is configured.
import { Link, useNavigate, useSearchParams } from 'react-router';
import { signIn } from '../api.ts';
import { ErrorBanner, Field, SubmitButton, useSubmit } from '../ui/index.ts';

/** Where to go after signing in: the page asked for, if it is one of ours. */
export function nextPage(params: URLSearchParams): string {
  const next = params.get('next') ?? '/';
  return next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export default function SignIn() {
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const { busy, error, fields, onSubmit } = useSubmit();
  const submit = onSubmit(async (form) => {
    await signIn(String(form.get('email')), String(form.get('password')));
    navigate(nextPage(params), { replace: true });
  });
  return (
    <main className="auth-card">
      <h1>Sign in to Kiln</h1>
      <form onSubmit={submit} noValidate className="stack">
        <ErrorBanner error={error} />
        <Field label="E-mail" name="email" type="email" autoComplete="email" required error={fields.email} />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required error={fields.password} />
        <SubmitButton busy={busy} busyLabel="Signing in…">Sign in</SubmitButton>
      </form>
      <p className="muted">
        Your organization uses single sign-on? <Link to={`/sign-in/sso${params.size ? `?${params}` : ''}`}>Sign in with SSO</Link>
      </p>
      <p className="muted">
        New to Kiln? <Link to={`/sign-up${params.size ? `?${params}` : ''}`}>Create an account</Link>
      </p>
    </main>
  );
}
