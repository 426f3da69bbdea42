// Where the address-change e-mail's link leads (/settings/profile/verify-email?token=..., settings/service.ts):
// signed in (sign-in comes back here), the token is filled in and confirmed with one button.
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import type { Schemas } from '../api.ts';
import { PageHeader } from '../ui/index.ts';
import { VerifyEmailForm } from './Settings.tsx';

export default function VerifyEmail() {
  const [params] = useSearchParams();
  const [verified, setVerified] = useState<Schemas['Profile']>();
  return (
    <>
      <PageHeader title="Confirm your e-mail address" description="Confirming moves your sign-in and mail to the new address." />
      <section className="card">
        {verified ? (
          <p role="status">
            Confirmed: Kiln now uses <strong>{verified.email}</strong>. <Link to="/settings/general">Back to settings</Link>
          </p>
        ) : (
          <VerifyEmailForm initialToken={params.get('token') ?? ''} onVerified={setVerified} />
        )}
      </section>
    </>
  );
}
