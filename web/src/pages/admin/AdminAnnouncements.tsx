// Administration, Announcements: notices shown to every organization (or some), optionally in a window.
import { useState } from 'react';
import { api, ok, type Schemas } from '../../api.ts';
import { ConfirmDialog, DataTable, EmptyState, ErrorBanner, Field, PageHeader, SelectField, SubmitButton, useApi, useSubmit, useToast, type Column } from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type Notice = Schemas['Notification'];

export default function AdminAnnouncements() {
  return <AdminOnly title="Announcements"><Announcements /></AdminOnly>;
}

function Announcements() {
  const toast = useToast();
  const notices = useApi(() => ok(api.GET('/v1/admin/notifications', { params: { query: { limit: 100 } } })), []);
  const { busy, error, fields, onSubmit } = useSubmit();
  const [deleting, setDeleting] = useState<Notice>();
  const create = onSubmit(async (form, formElement) => {
    const notice = await ok(api.POST('/v1/admin/notifications', {
      body: { title: String(form.get('title') ?? '').trim(), message: String(form.get('message') ?? '').trim(), severity: String(form.get('severity')) as Notice['severity'] },
    }));
    toast(`“${notice.title}” published`);
    formElement.reset();
    notices.reload();
  });
  const columns: Column<Notice>[] = [
    { header: 'Announcement', cell: (n) => <span className="stack-xs"><strong>{n.title}</strong><span className="muted small">{n.message}</span></span> },
    { header: 'Severity', cell: (n) => <span className={`badge badge-${n.severity}`}>{n.severity}</span> },
    { header: 'Audience', cell: (n) => (n.audience ? `${n.audience.organizationIds.length} organization(s)` : 'Everyone') },
    { header: 'Shown', cell: (n) => `${n.startsAt ? new Date(n.startsAt).toLocaleString() : 'Now'} – ${n.endsAt ? new Date(n.endsAt).toLocaleString() : 'until deleted'}` },
    { header: 'Actions', cell: (n) => <button type="button" className="button button-danger-quiet" aria-label={`Delete ${n.title}`} onClick={() => setDeleting(n)}>Delete</button> },
  ];
  return (
    <>
      <PageHeader title="Announcements" description="Notices every organization (or some) sees: maintenance, incidents, news." />
      <section className="card" aria-labelledby="new-notice-title">
        <h2 id="new-notice-title">Publish an announcement</h2>
        <form className="stack" noValidate onSubmit={create}>
          <ErrorBanner error={error} />
          <Field label="Title" name="title" required error={fields.title} />
          <Field label="Message" name="message" required error={fields.message} />
          <SelectField label="Severity" name="severity" options={[{ value: 'info', label: 'Information' }, { value: 'warning', label: 'Warning' }, { value: 'critical', label: 'Critical' }]} error={fields.severity} />
          <div><SubmitButton busy={busy} busyLabel="Publishing…">Publish to everyone</SubmitButton></div>
        </form>
      </section>
      <section className="stack" aria-labelledby="notices-title">
        <h2 id="notices-title">Announcements</h2>
        <ErrorBanner error={notices.error} onRetry={notices.reload} />
        {!notices.error && <DataTable caption="Announcements" columns={columns} rows={notices.data?.data} rowKey={(n) => n.id} empty={<EmptyState title="No announcements" />} />}
      </section>
      <ConfirmDialog
        open={!!deleting}
        title={`Delete “${deleting?.title ?? ''}”?`}
        confirmLabel="Delete announcement"
        onClose={() => setDeleting(undefined)}
        onConfirm={async () => {
          if (!deleting) return;
          await ok(api.DELETE('/v1/admin/notifications/{id}', { params: { path: { id: deleting.id } } }));
          toast('Announcement deleted');
          notices.reload();
        }}
      >
        <p>No organization sees it any more.</p>
      </ConfirmDialog>
    </>
  );
}
