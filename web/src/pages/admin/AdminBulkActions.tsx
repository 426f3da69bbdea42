// Administration, Bulk actions: stop, start or delete up to 100 deployments of any organization at once, by
// their ids (what POST /v1/admin/deployments/bulk takes), after a confirmation that says how many; then the
// result of each one.
import { useState, type FormEvent } from 'react';
import { api, ok, type Schemas } from '../../api.ts';
import {
  ConfirmDialog, DataTable, EmptyState, ErrorBanner, FieldFrame, PageHeader, StatusBadge, SubmitButton, useSubmit, type Column,
} from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type Action = Schemas['BulkDeploymentActionRequest']['action'];
type Response = Schemas['BulkDeploymentActionResponse'];
type Result = Response['results'][number];

/** The route's limit on ids per request (admin/schemas.ts BulkActionRequest). */
const MAX_IDS = 100;
/** Ids listed in the confirmation, to check against; the rest are counted. */
const SHOWN_IN_DIALOG = 5;
const ACTIONS: readonly { value: Action; label: string; verb: string; meaning: string }[] = [
  { value: 'stop', label: 'Stop', verb: 'Stop', meaning: 'Their replicas are removed and they stop costing; each can be started again.' },
  { value: 'start', label: 'Start', verb: 'Start', meaning: 'Stopped deployments are started again with their configuration.' },
  { value: 'delete', label: 'Delete', verb: 'Delete', meaning: 'They are torn down for good and leave their organizations\' lists. This cannot be undone.' },
];
const actionOf = (value: Action) => ACTIONS.find((a) => a.value === value)!;

/** The distinct ids of the text (one a line, or separated by commas or spaces), and how many repeats were dropped. */
function idsOf(text: string): { ids: string[]; repeated: number } {
  const all = text.split(/[\s,]+/).filter(Boolean);
  const ids = [...new Set(all)];
  return { ids, repeated: all.length - ids.length };
}

const count = (n: number) => (n === 1 ? '1 deployment' : `${n} deployments`);

const RESULT_TEXT: Record<Result['result'], string> = { ok: 'Done', not_found: 'Not found', error: 'Refused' };
const RESULT_TONE: Record<Result['result'], 'ok' | 'idle' | 'bad'> = { ok: 'ok', not_found: 'idle', error: 'bad' };

export default function AdminBulkActions() {
  return <AdminOnly title="Bulk actions"><BulkActions /></AdminOnly>;
}

function BulkActions() {
  const [text, setText] = useState('');
  const [action, setAction] = useState<Action>('stop');
  // A check made here before asking (no id, too many); the API's own refusals come through useSubmit's fields.
  const [local, setLocal] = useState<string>();
  const [confirming, setConfirming] = useState<{ ids: string[]; action: Action }>();
  const [answer, setAnswer] = useState<Response>();
  const send = useSubmit();
  // Choosing without typing: the failed deployments Operations lists (newest first, up to 50), added to the list.
  const failed = useSubmit();
  const [added, setAdded] = useState<string>();
  const addFailed = () => failed.run(async () => {
    const { failedWorkflows } = await ok(api.GET('/v1/admin/operations'));
    const known = new Set(ids);
    const fresh = failedWorkflows.map((f) => f.deploymentId).filter((id) => !known.has(id));
    if (fresh.length) setText((t) => `${t.trim() ? `${t.trimEnd()}\n` : ''}${fresh.join('\n')}`);
    setLocal(undefined);
    setAdded(failedWorkflows.length
      ? `${count(fresh.length)} added (${count(failedWorkflows.length)} failed in all).`
      : 'No deployment has failed: nothing added.');
  }, 'failed');
  const { ids, repeated } = idsOf(text);
  // The API names an item's field by its index (ids.3): it belongs to the one textarea.
  const idsError = local ?? send.fields.ids ?? Object.entries(send.fields).find(([f]) => f.startsWith('ids.'))?.[1];

  const review = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    send.setError(undefined);
    if (!ids.length) return setLocal('Enter at least one deployment id.');
    if (ids.length > MAX_IDS) return setLocal(`At most ${MAX_IDS} deployments at a time: this list has ${ids.length}.`);
    setLocal(undefined);
    setConfirming({ ids, action });
  };

  const columns: Column<Result>[] = [
    { header: 'Deployment', cell: (r) => <code>{r.id}</code> },
    { header: 'Result', cell: (r) => <StatusBadge status={RESULT_TEXT[r.result]} tone={RESULT_TONE[r.result]} /> },
    { header: 'Status after', cell: (r) => (r.status ? <StatusBadge status={r.status} /> : <span className="muted">—</span>) },
    { header: 'Why', cell: (r) => (r.error ? <span className="stack-xs"><span>{r.error.message}</span><code className="muted small">{r.error.code}</code></span> : r.result === 'not_found' ? 'No such deployment (or already deleted)' : '—') },
  ];
  const chosen = actionOf(action);

  return (
    <>
      <PageHeader title="Bulk actions" description="Stop, start or delete deployments of any organization at once, through their workflows, as their owners would." />

      <section className="card" aria-labelledby="bulk-form-title">
        <h2 id="bulk-form-title">Choose deployments and an action</h2>
        <form className="stack" noValidate onSubmit={review}>
          <ErrorBanner error={send.error} />
          <FieldFrame
            label="Deployment ids"
            hint={`One a line, or separated by commas or spaces; up to ${MAX_IDS}. Operations lists failed deployments with theirs; an organization sees each one's on its deployment pages.`}
            error={idsError}
          >
            {(control) => (
              <textarea
                {...control}
                name="ids"
                rows={5}
                className="code-input"
                spellCheck={false}
                placeholder={'dep_0123456789abcdefghij\ndep_…'}
                value={text}
                onChange={(e) => { setText(e.target.value); setLocal(undefined); }}
              />
            )}
          </FieldFrame>
          <div className="row">
            <button type="button" className="button" onClick={() => void addFailed()} disabled={failed.busy}>
              {failed.busy ? 'Adding…' : 'Add every failed deployment'}
            </button>
            <span className="muted small" role="status">{added}</span>
          </div>
          <ErrorBanner error={failed.error} />
          <p className="muted small" aria-live="polite">
            {count(ids.length)}
            {repeated > 0 && ` (${repeated} repeated id${repeated > 1 ? 's' : ''} counted once)`}
          </p>
          <fieldset className="radio-group">
            <legend>Action</legend>
            {ACTIONS.map((a) => (
              <label key={a.value} className="radio-option">
                <input type="radio" name="action" value={a.value} checked={action === a.value} onChange={() => setAction(a.value)} />
                <span>
                  <strong>{a.label}</strong>
                  <span className="muted small block">{a.meaning}</span>
                </span>
              </label>
            ))}
          </fieldset>
          {send.fields.action && <p className="field-error">{send.fields.action}</p>}
          <div>
            <SubmitButton busy={send.busy} busyLabel="Working…" className={action === 'delete' ? 'button button-danger' : 'button button-primary'}>
              {`${chosen.verb} ${count(ids.length)}…`}
            </SubmitButton>
          </div>
        </form>
      </section>

      <section className="stack" aria-labelledby="bulk-results-title">
        <h2 id="bulk-results-title">Result</h2>
        {answer ? (
          <>
            <p role="status">
              {actionOf(answer.action).verb}: <strong>{answer.summary.ok} done</strong>, {answer.summary.notFound} not found, {answer.summary.error} refused.
            </p>
            <p className="muted small">Each deployment&apos;s workflow carries the action out: its status changes as it does, on its organization&apos;s pages and under Operations.</p>
            <DataTable caption="Result per deployment" columns={columns} rows={answer.results} rowKey={(r) => r.id} />
          </>
        ) : (
          <EmptyState title="Nothing sent yet">The result of each deployment shows here once an action has run.</EmptyState>
        )}
      </section>

      <ConfirmDialog
        open={!!confirming}
        destructive={confirming?.action !== 'start'}
        title={confirming ? `${actionOf(confirming.action).verb} ${count(confirming.ids.length)}?` : ''}
        confirmLabel={confirming ? `${actionOf(confirming.action).verb} ${count(confirming.ids.length)}` : ''}
        onClose={() => setConfirming(undefined)}
        // Sent through the page's useSubmit, so a refused field shows at the field once the dialog closes.
        onConfirm={() => (confirming ? send.run(async () => {
          setAnswer(await ok(api.POST('/v1/admin/deployments/bulk', { body: { action: confirming.action, ids: confirming.ids } })));
        }, 'bulk') : undefined)}
      >
        <p>{confirming && actionOf(confirming.action).meaning} Their organizations see it on their pages as if they had done it.</p>
        {confirming && (
          <ul className="small">
            {confirming.ids.slice(0, SHOWN_IN_DIALOG).map((id) => <li key={id}><code>{id}</code></li>)}
            {confirming.ids.length > SHOWN_IN_DIALOG && <li>and {confirming.ids.length - SHOWN_IN_DIALOG} more</li>}
          </ul>
        )}
      </ConfirmDialog>
    </>
  );
}
