import type { ReactNode } from 'react';
import { Skeleton } from './Loading.tsx';

/**
 * One figure with its label (in a `.stats` grid): a skeleton of its size while `value` is undefined, an
 * optional line under it, and `warn` for a figure that calls for action (shown in the danger colour).
 */
export function Stat({ label, value, hint, warn }: { label: string; value: ReactNode | undefined; hint?: ReactNode; warn?: boolean }) {
  return (
    <div className={warn ? 'stat stat-warn' : 'stat'}>
      <span className="stat-label">{label}</span>
      <strong className="stat-value">{value ?? <Skeleton width="5em" height="1.4em" />}</strong>
      {hint && <span className="muted small">{hint}</span>}
    </div>
  );
}
