import { useEffect, useId, useRef, type ReactNode } from 'react';
import { ErrorBanner } from './ErrorBanner.tsx';
import { useSubmit } from './useSubmit.ts';

export interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children?: ReactNode;
  /** The button's label, saying what happens: "Revoke key", "Delete deployment". */
  confirmLabel: string;
  /** Runs the action; the dialog stays open (busy) until it settles, and shows its error if it fails. */
  onConfirm(): Promise<void> | void;
  onClose(): void;
  /** Destructive actions are red and focus Cancel first, so Enter does not destroy. */
  destructive?: boolean;
}

/**
 * A modal confirmation on the native <dialog> (focus kept inside, Escape closes, the page behind inert).
 * `<ConfirmDialog open={!!target} title="Revoke key?" confirmLabel="Revoke key" destructive onConfirm={...} onClose={...}>`.
 */
export function ConfirmDialog({ open, title, children, confirmLabel, onConfirm, onClose, destructive = true }: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const { busy, error, setError, run } = useSubmit();
  // Its own id: a page may hold several dialogs, and each must be named by its own title.
  const titleId = useId();

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      setError(undefined);
      dialog.showModal();
    } else if (!open && dialog.open) dialog.close();
  }, [open]);

  const confirm = () => run(async () => {
    await onConfirm();
    onClose();
  });

  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose} onCancel={(e) => busy && e.preventDefault()}>
      <h2 id={titleId}>{title}</h2>
      <div className="dialog-body">{children}</div>
      <ErrorBanner error={error} />
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onClose} disabled={busy} autoFocus={destructive}>
          Cancel
        </button>
        <button type="button" className={destructive ? 'button button-danger' : 'button button-primary'} onClick={() => void confirm()} disabled={busy} autoFocus={!destructive}>
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
