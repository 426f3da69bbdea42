import { Link } from 'react-router';
import { EmptyState, PageHeader } from '../ui/index.ts';

export default function NotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <EmptyState title="There is no page at this address" action={<Link className="button button-primary" to="/">Go to the home page</Link>}>
        The link may be old, or the address mistyped.
      </EmptyState>
    </>
  );
}
