// Administration, Errors (GET /v1/admin/errortracker/issues): the unhandled errors Kiln answered 500,
// grouped by fingerprint, most recently seen first in cursor pages; each with its count, first and last
// sighting, the request it last broke and the top frames of its stack. The routes offer no per-issue
// action (no resolve or ignore): an issue stays listed, and its last sighting says whether it recurs.
import { api, ok, type Schemas } from '../../api.ts';
import { CopyButton, EmptyState, ErrorBanner, LoadingRows, PageHeader, Pager, useApi, useCursorPages } from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type Issue = Schemas['ErrorIssue'];

const PAGE_SIZE = 25;
const when = (iso: string) => new Date(iso).toLocaleString();

export default function AdminErrors() {
  return <AdminOnly title="Errors"><Errors /></AdminOnly>;
}

function IssueCard({ issue }: { issue: Issue }) {
  return (
    <li className="card">
      <div className="row">
        <h3 className="grow"><code>{issue.name}</code></h3>
        <span className={`badge ${issue.count > 1 ? 'badge-firing' : ''}`}>{issue.count === 1 ? 'once' : `${issue.count.toLocaleString()} times`}</span>
      </div>
      <p className="issue-message">{issue.message}</p>
      <dl className="facts">
        <div><dt>First seen</dt><dd><time dateTime={issue.firstSeenAt}>{when(issue.firstSeenAt)}</time></dd></div>
        <div><dt>Last seen</dt><dd><time dateTime={issue.lastSeenAt}>{when(issue.lastSeenAt)}</time></dd></div>
        <div className="facts-wide"><dt>Last request</dt><dd><code>{issue.lastRequest}</code></dd></div>
      </dl>
      <details>
        <summary>Stack of the latest occurrence</summary>
        <pre className="stack-trace">{issue.stack || 'No stack frames were recorded.'}</pre>
        <div className="row">
          <span className="muted small">Fingerprint <code>{issue.fingerprint}</code></span>
          <CopyButton value={issue.stack} label="Copy stack" />
        </div>
      </details>
    </li>
  );
}

function Errors() {
  const pages = useCursorPages();
  const { cursor } = pages;
  const issues = useApi(() => ok(api.GET('/v1/admin/errortracker/issues', { params: { query: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } } })), [cursor]);
  const page = issues.data;
  return (
    <>
      <PageHeader
        title="Errors"
        description="Unhandled errors Kiln answered with 500, each distinct failure once with how often it happened. Callers saw only “Internal server error” and a request id; the details are here and in the logs."
        actions={<button type="button" className="button" onClick={issues.reload}>Refresh</button>}
      />
      <section className="stack" aria-labelledby="issues-title">
        <h2 id="issues-title">Issues, most recently seen first</h2>
        <ErrorBanner error={issues.error} onRetry={issues.reload} />
        {!page && !issues.error && <LoadingRows rows={4} columns={3} label="Loading errors" />}
        {page && page.data.length === 0 && (
          <EmptyState title="No errors recorded">Nothing has failed unexpectedly{cursor ? ' beyond the previous page' : ''}. Failures appear here as they happen.</EmptyState>
        )}
        {page && page.data.length > 0 && (
          <ol className="issues" aria-label="Error issues">
            {page.data.map((issue) => <IssueCard key={issue.id} issue={issue} />)}
          </ol>
        )}
        <Pager pages={pages} pagination={page?.pagination} loading={issues.loading} label="Error pages" />
      </section>
    </>
  );
}
