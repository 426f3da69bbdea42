// The SDK's generated types are those of the document Kiln serves: a route added or changed without
// regenerating client/sdk/schema.ts fails here, naming the command that brings it up to date.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import type { OpenAPI3 } from 'openapi-typescript';
import { generateSchema, REGENERATE_COMMAND, SCHEMA_FILE } from '../../infra/sdk/generate.ts';
import { startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

test('client/sdk/schema.ts is what the served OpenAPI document generates', async (t) => {
  const served = (await api.request('GET', '/api/openapi.json')).body as OpenAPI3;
  const expected = await generateSchema(served);
  const checkedIn = await readFile(SCHEMA_FILE, 'utf8');
  t.true(checkedIn === expected, `client/sdk/schema.ts is out of date with the OpenAPI document Kiln serves: run \`${REGENERATE_COMMAND}\` and commit client/sdk/schema.ts`);
});
