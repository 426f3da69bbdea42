// Sign up: the user, their organization (free plan) and its owner membership, in one call.
import { Link, useNavigate, useSearchParams } from 'react-router';
import { signUp } from '../api.ts';
import { ErrorBanner, Field, SubmitButton, useSubmit } from '../ui/index.ts';
import { nextPage } from './SignIn.tsx';

export default function SignUp() {
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const { busy, error, fields, onSubmit } = useSubmit();
  const submit = onSubmit(async (form) => {
    const value = (name: string) => String(form.get(name) ?? '');
    await signUp({ name: value('name'), organizationName: value('organizationName'), email: value('email'), password: value('password') });
    navigate(nextPage(params), { replace: true });
  });
  return (
    <main className="auth-card">
      <h1>Create your Kiln account</h1>
      <form onSubmit={submit} noValidate className="stack">
        <ErrorBanner error={error} />
        <Field label="Your name" name="name" autoComplete="name" required error={fields.name} />
        <Field label="Organization" name="organizationName" autoComplete="organization" required hint="Your team or company; you can invite others later." error={fields.organizationName} />
        <Field label="E-mail" name="email" type="email" autoComplete="email" required error={fields.email} />
        <Field label="Password" name="password" type="password" autoComplete="new-password" required minLength={8} hint="At least 8 characters." error={fields.password} />
        <SubmitButton busy={busy} busyLabel="Creating your account…">Create account</SubmitButton>
      </form>
      <p className="muted">
        Already have an account? <Link to={`/sign-in${params.size ? `?${params}` : ''}`}>Sign in</Link>
      </p>
    </main>
  );
}
