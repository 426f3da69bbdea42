// A deployment's status as colour and words (the colour alone says nothing to a screen reader or to
// someone who cannot tell red from green, so the text is always there).

/** The tone of each lifecycle status (workflows/contract/deployment.ts DEPLOYMENT_STATUSES). */
const TONES: Record<string, 'ok' | 'busy' | 'idle' | 'bad'> = {
  running: 'ok',
  pending: 'busy', deploying: 'busy', scaling: 'busy', updating: 'busy', stopping: 'busy', deleting: 'busy',
  scaled_to_zero: 'idle', stopped: 'idle', deleted: 'idle',
  failed: 'bad',
};

/** `scaled_to_zero` reads "scaled to zero". */
export const statusText = (status: string) => status.replaceAll('_', ' ');

/** `tone` when the status is not a deployment's (a cluster's `ready`, a report's `running`). */
export function StatusBadge({ status, tone }: { status: string; tone?: 'ok' | 'busy' | 'idle' | 'bad' }) {
  return (
    <span className={`status status-${tone ?? TONES[status] ?? 'idle'}`} data-status={status}>
      <span className="status-dot" aria-hidden="true" />
      {statusText(status)}
    </span>
  );
}
