// The Temporal dev server shared by a test run (started by infra/with-test-servers.ts).
export function testTemporalAddress(): string {
  const address = process.env.KILN_TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('KILN_TEST_TEMPORAL_ADDRESS is not set: run the tests with `npm test`');
  return address;
}
