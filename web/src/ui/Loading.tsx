// Skeletons the size of what they stand for, so the page does not jump when the data arrives.

export function Skeleton({ width = '100%', height = '1em' }: { width?: string; height?: string }) {
  return <span className="skeleton" style={{ width, height }} aria-hidden="true" />;
}

/** A table's worth of skeleton rows, announced once to screen readers. */
export function LoadingRows({ rows = 5, columns = 4, label = 'Loading' }: { rows?: number; columns?: number; label?: string }) {
  return (
    <div className="loading-rows" role="status" aria-live="polite">
      <span className="visually-hidden">{label}…</span>
      {Array.from({ length: rows }, (_, r) => (
        <div className="loading-row" key={r}>
          {Array.from({ length: columns }, (_, c) => (
            <Skeleton key={c} width={c === 0 ? '30%' : '15%'} />
          ))}
        </div>
      ))}
    </div>
  );
}

/** A block of text lines being loaded. */
export function LoadingBlock({ lines = 3, label = 'Loading' }: { lines?: number; label?: string }) {
  return (
    <div role="status" aria-live="polite" className="stack-s">
      <span className="visually-hidden">{label}…</span>
      {Array.from({ length: lines }, (_, i) => (
        <Skeleton key={i} width={i === lines - 1 ? '60%' : '100%'} />
      ))}
    </div>
  );
}
