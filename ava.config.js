// Every test file but the end-to-end ones, two files at a time (each file has its own database).
export default {
  extensions: ['ts'],
  files: ['test/**/*.test.ts', '!test/e2e/**'],
  timeout: '5m',
  workerThreads: false,
  concurrency: 2,
};
