// The end-to-end files (test/e2e): each runs all of Kiln (its own Temporal server, local cluster, Prometheus,
// database), so they run after the rest, two at a time: one file alone leaves a core idle about half the time
// (it waits on Kiln's own timers and the cluster), two fill it. Twenty concurrent pulumi ups beside the
// ordinary files once starved their timing on 2 cores, hence the separate phase. Their order is
// ava.config.js's LONGEST_FIRST.
import base from './ava.config.js';

export default { ...base, files: ['test/e2e/**/*.test.ts'], concurrency: 2 };
