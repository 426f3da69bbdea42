// Where the invitation e-mail's link leads (/invite/<token>, team/service.ts): who invites you to what, as
// which role; accept by signing in (an account exists for the address) or by signing up (name and password),
// which joins and opens the dashboard in that organization; or decline.
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { KilnError, ok, publicApi } from '../api.ts';
import { isBuiltInRole, ROLE_MEANINGS } from '../permissions.ts';
import { saveSession, sessionFrom } from '../session.ts';
import { ConfirmDialog, ErrorBanner, Field, LoadingBlock, SubmitButton, useApi, useSubmit } from '../ui/index.ts';

export default function AcceptInvitation() {
  const { token = '' } = useParams();
  const navigate = useNavigate();
  const preview = useApi(() => ok(publicApi.GET('/v1/team/invite/{token}', { params: { path: { token } } })), [token]);
  const { busy, error, fields, onSubmit } = useSubmit();
  const [declined, setDeclined] = useState(false);
  const [declining, setDeclining] = useState(false);

  const accept = onSubmit(async (form) => {
    const name = form.get('name');
    const data = await ok(publicApi.POST('/v1/team/invite/{token}/accept', {
      params: { path: { token } },
      body: { password: String(form.get('password') ?? ''), ...(name === null ? {} : { name: String(name) }) },
    }));
    saveSession(sessionFrom(data));
    navigate('/', { replace: true });
  });

  const decline = async () => {
    await ok(publicApi.POST('/v1/team/invite/{token}/decline', { params: { path: { token } }, body: {} }));
    setDeclined(true);
  };

  const invitation = preview.data;
  const gone = preview.error instanceof KilnError && (preview.error.statusCode === 404 || preview.error.statusCode === 422);
  return (
    <main className="auth-card">
      <h1>Join an organization on Kiln</h1>
      {preview.loading && !invitation && <LoadingBlock label="Loading the invitation" />}
      {gone && (
        <div className="banner banner-error" role="alert">
          <div>
            <strong>This invitation link does not work any more.</strong>
            <p>It was used, revoked, replaced by a newer one, or it expired. Ask whoever invited you to send it again.</p>
          </div>
        </div>
      )}
      {!gone && <ErrorBanner error={preview.error} onRetry={preview.reload} />}
      {declined && (
        <p className="banner banner-info" role="status">
          You declined the invitation. Nothing was shared with you; you can close this page.
        </p>
      )}
      {invitation && !declined && (
        <>
          <p>
            <strong>{invitation.invitedBy.name}</strong> invited <strong>{invitation.email}</strong> to join <strong>{invitation.organization.name}</strong> as{' '}
            <strong>{invitation.role}</strong>.
          </p>
          {isBuiltInRole(invitation.role) && <p className="muted small">{ROLE_MEANINGS[invitation.role]}</p>}
          <form onSubmit={accept} noValidate className="stack">
            <ErrorBanner error={error} />
            {invitation.accountExists ? (
              <>
                <p className="muted">You already have a Kiln account: sign in with its password to join.</p>
                <Field label="Password" name="password" type="password" autoComplete="current-password" required error={fields.password} />
              </>
            ) : (
              <>
                <p className="muted">Create your account to join: your e-mail address is the one invited.</p>
                <Field label="Your name" name="name" autoComplete="name" required error={fields.name} />
                <Field label="Password" name="password" type="password" autoComplete="new-password" required minLength={8} hint="At least 8 characters." error={fields.password} />
              </>
            )}
            <SubmitButton busy={busy} busyLabel="Joining…">{invitation.accountExists ? 'Sign in and join' : 'Create account and join'}</SubmitButton>
            <button type="button" className="button button-quiet" disabled={busy} onClick={() => setDeclining(true)}>
              Decline the invitation
            </button>
          </form>
          <p className="muted small">The invitation expires {new Date(invitation.expiresAt).toLocaleString()}.</p>
        </>
      )}
      <p className="muted">
        <Link to="/sign-in">Go to sign-in</Link>
      </p>
      <ConfirmDialog open={declining} title="Decline the invitation?" confirmLabel="Decline" onClose={() => setDeclining(false)} onConfirm={decline}>
        <p>The link stops working; to join later, ask {invitation?.invitedBy.name ?? 'whoever invited you'} to invite you again.</p>
      </ConfirmDialog>
    </main>
  );
}
