// Every test file but the end-to-end ones, two files at a time (each file has its own database).
//
// The files that take a minute or more start first, a browser or Pulumi file beside a lighter kind, so the
// phase never ends with one long file running alone on an otherwise idle machine; the rest follow by name.
const LONGEST_FIRST = [
  'test/contract/schemathesis.test.ts',
  'test/web/catalog-and-alerts.test.ts',
  'test/workflows/deployment-workflow.test.ts',
  'test/web/admin-insights.test.ts',
  'test/infra/pulumi-kubernetes.test.ts',
  'test/web/admin-platform.test.ts',
  'test/workflows/cluster-placement.test.ts',
  'test/web/organization.test.ts',
  'test/cli/cli.test.ts',
  'test/web/deployments.test.ts',
  'test/workflows/metering.test.ts',
  'test/web/auth-and-keys.test.ts',
  // The end-to-end phase (ava.e2e.config.js): the twenty-deployment file last, beside a lighter file rather
  // than beside the lifecycle file's waits.
  'test/e2e/lifecycle.test.ts',
  'test/e2e/alerts.test.ts',
  'test/e2e/autoscaling.test.ts',
  'test/e2e/resilience.test.ts',
  'test/e2e/topology.test.ts',
  'test/e2e/cli-examples.test.ts',
  'test/e2e/web-deployments.test.ts',
  'test/e2e/many-tenants.test.ts',
];
const rank = (file) => {
  const index = LONGEST_FIRST.findIndex((slow) => file.endsWith(slow));
  return index === -1 ? LONGEST_FIRST.length : index;
};

export default {
  extensions: ['ts'],
  files: ['test/**/*.test.ts', '!test/e2e/**'],
  timeout: '5m',
  workerThreads: false,
  concurrency: 2,
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b),
};
