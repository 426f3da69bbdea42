import { explain } from './errors.ts';

/** A failure said in full: what happened, what to do, and the code and request id for support. */
export function ErrorBanner({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  const e = explain(error);
  return (
    <div className="banner banner-error" role="alert">
      <div>
        <strong>{e.title}</strong>
        <p>{e.advice}</p>
        <p className="muted small">
          {e.code}
          {e.requestId ? ` · request ${e.requestId}` : ''}
        </p>
      </div>
      {onRetry && (
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
