// The page both kinds of key are managed on (Settings' API keys, Administration's service keys): a value shown
// once after it is made, the form that makes one, the keys in use with their actions, and the confirmation
// before a change that breaks the key's holder. Each page brings its calls, columns, words and extra fields.
import { useState, type FormEvent, type ReactNode } from 'react';
import { ConfirmDialog } from './ConfirmDialog.tsx';
import { CopyButton } from './CopyButton.tsx';
import { DataTable, type Column } from './DataTable.tsx';
import { EmptyState } from './EmptyState.tsx';
import { ErrorBanner } from './ErrorBanner.tsx';
import { Field } from './Field.tsx';
import { SubmitButton } from './SubmitButton.tsx';

/** What every key shows: never its value, which only its maker sees once. */
interface KeyRow {
  id: string;
  name: string;
  prefix: string;
}

/** A key's time, or "Never" (a key not used yet). */
export const keyTime = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'Never');

export interface KeyManagerProps<K extends KeyRow> {
  /** The value just made, shown until dismissed: gone on reload (Kiln keeps only its hash). */
  shown?: { name: string; value: string; how: 'created' | 'rotated' };
  onDismissShown(): void;
  /** The shown value's test id. */
  valueTestId: string;
  /** Said under the value: how to use it, what happened to the previous one. */
  shownNote?: ReactNode;
  create: {
    title: string;
    nameHint: string;
    busy: boolean;
    error: unknown;
    fields: Record<string, string | undefined>;
    onSubmit(event: FormEvent<HTMLFormElement>): void;
    /** Fields after the name (a scope). */
    extra?: ReactNode;
  };
  list: { title: string; caption: string; keys: { data?: K[]; error: unknown; reload(): void }; columns: Column<K>[]; empty: { title: string; body: ReactNode } };
  /** What each key's row offers (revoke, rotate), each confirmed first: it breaks the key's holder. */
  actions: readonly KeyAction<K>[];
}

export interface KeyAction<K> {
  /** The button's word ("Revoke"); the dialog asks "<label> “<name>”?". */
  label: string;
  /** The dialog's button ("Revoke key"). */
  confirmLabel: string;
  danger?: boolean;
  /** What confirming does to the key's holder. */
  explain(key: K): ReactNode;
  run(key: K): Promise<void>;
}

export function KeyManager<K extends KeyRow>({ shown, onDismissShown, valueTestId, shownNote, create, list, actions }: KeyManagerProps<K>) {
  const [asked, setAsked] = useState<{ action: KeyAction<K>; key: K }>();
  const columns: Column<K>[] = [...list.columns, {
    header: 'Actions',
    cell: (k) => (
      <span className="row-actions">
        {actions.map((action) => (
          <button key={action.label} type="button" className={action.danger ? 'button button-danger-quiet' : 'button'} aria-label={`${action.label} ${k.name}`} onClick={() => setAsked({ action, key: k })}>
            {action.label}
          </button>
        ))}
      </span>
    ),
  }];
  return (
    <>
      {shown && (
        <section className="banner banner-success" aria-labelledby="shown-key-title">
          <div className="stack-s grow">
            <h2 id="shown-key-title">Key “{shown.name}” {shown.how}</h2>
            <p>
              <strong>Copy it now: it will not be shown again.</strong> Kiln keeps only its hash
              {shown.how === 'rotated' ? '. The previous value already stopped working.' : '; if you lose it, revoke it and create another.'}
            </p>
            <div className="secret-row">
              <code className="secret" data-testid={valueTestId}>{shown.value}</code>
              <CopyButton value={shown.value} label="Copy key" />
            </div>
            {shownNote}
          </div>
          <button type="button" className="button button-quiet" onClick={onDismissShown}>I have copied it</button>
        </section>
      )}

      <section className="card" aria-labelledby="create-key-title">
        <h2 id="create-key-title">{create.title}</h2>
        <form onSubmit={create.onSubmit} noValidate className="stack">
          <ErrorBanner error={create.error} />
          <Field label="Name" name="name" required maxLength={100} hint={create.nameHint} error={create.fields.name} />
          {create.extra}
          <div><SubmitButton busy={create.busy} busyLabel="Creating…">Create key</SubmitButton></div>
        </form>
      </section>

      <section aria-labelledby="keys-title" className="stack">
        <h2 id="keys-title">{list.title}</h2>
        <ErrorBanner error={list.keys.error} onRetry={list.keys.reload} />
        {!list.keys.error && (
          <DataTable caption={list.caption} columns={columns} rows={list.keys.data} rowKey={(k) => k.id} empty={<EmptyState title={list.empty.title}>{list.empty.body}</EmptyState>} />
        )}
      </section>

      <ConfirmDialog
        open={!!asked}
        title={`${asked?.action.label ?? ''} “${asked?.key.name ?? ''}”?`}
        confirmLabel={asked?.action.confirmLabel ?? ''}
        onClose={() => setAsked(undefined)}
        onConfirm={() => (asked ? asked.action.run(asked.key) : undefined)}
      >
        {asked && <p>{asked.action.explain(asked.key)}</p>}
      </ConfirmDialog>
    </>
  );
}
