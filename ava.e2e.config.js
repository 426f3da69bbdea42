// The end-to-end files (test/e2e): each runs all of Kiln and drives many Pulumi operations at once, so they
// run one at a time, after the rest, and never starve another file's timing on 2 cores.
import base from './ava.config.js';

export default { ...base, files: ['test/e2e/**/*.test.ts'], concurrency: 1 };
