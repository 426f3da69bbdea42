// The end-to-end files (test/e2e): each runs all of Kiln (its own Temporal server, local cluster, Prometheus,
// database), so they run after the rest, two at a time: one file alone leaves a core idle about half the time
// (it waits on Kiln's own timers and the cluster), two fill it. Twenty concurrent pulumi ups beside the
// ordinary files once starved their timing on 2 cores, hence the separate phase.
//
// The longest file starts first; the one that starts twenty deployments at once comes last, beside a lighter
// file rather than beside the lifecycle file's waits.
import base from './ava.config.js';

const ORDER = ['lifecycle', 'alerts', 'autoscaling', 'resilience', 'cli', 'web-deployments', 'many-tenants'];
const rank = (file) => {
  const index = ORDER.findIndex((name) => file.endsWith(`test/e2e/${name}.test.ts`));
  return index === -1 ? ORDER.length : index;
};

export default { ...base, files: ['test/e2e/**/*.test.ts'], concurrency: 2, sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b) };
