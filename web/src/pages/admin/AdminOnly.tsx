// The administration pages' gate: a platform administrator sees the page; anyone else, by a link or the
// address bar, a page saying it is not theirs (the API refuses its calls with 403 anyway).
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { usePlatformAdmin } from '../../platformAdmin.ts';
import { EmptyState, LoadingBlock, PageHeader } from '../../ui/index.ts';

export function AdminOnly({ title, children }: { title: string; children: ReactNode }) {
  const admin = usePlatformAdmin();
  if (admin === undefined) return <LoadingBlock lines={4} label="Checking your access" />;
  if (!admin) {
    return (
      <>
        <PageHeader title="Not allowed" />
        <EmptyState title={`${title} is for platform administrators`} action={<Link className="button button-primary" to="/">Go to the home page</Link>}>
          Your account is not one of this Kiln&apos;s platform administrators (KILN_ADMIN_EMAILS). If you need this page, ask whoever runs Kiln.
        </EmptyState>
      </>
    );
  }
  return <>{children}</>;
}

