import type { ReactNode } from 'react';

/**
 * A form's submit button that says when it is working: `<SubmitButton busy={save.busy} busyLabel="Saving…">Save</SubmitButton>`
 * (disabled while busy, so a form is not sent twice). Primary unless given another className.
 */
export function SubmitButton({ busy, busyLabel, className = 'button button-primary', children }: { busy: boolean; busyLabel: string; className?: string; children: ReactNode }) {
  return (
    <button type="submit" className={className} disabled={busy}>
      {busy ? busyLabel : children}
    </button>
  );
}
