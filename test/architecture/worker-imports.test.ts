// The worker opens the database, so it loads the ORM's entity list (control-plane/database/entities.ts); it
// must not load the API with it: no routes, no GraphQL, nothing of payments (Stripe) but its entities.
import test from 'ava';
import { loadedWith } from '../support/imports.ts';

const API_ONLY = [/routes\.ts$/, /^control-plane\/graphql\//, /^control-plane\/payments\/(?!.*\.entity\.ts$)/];

test('the worker loads the database and its entities but none of the API', (t) => {
  const loaded = loadedWith('workflows/worker.ts');
  t.log(`workflows/worker.ts loads ${loaded.size} of Kiln's files`);
  t.true(loaded.has('control-plane/database/orm.ts'));
  t.true(loaded.has('control-plane/deployments/deployment.entity.ts'));
  t.deepEqual([...loaded].filter((file) => API_ONLY.some((pattern) => pattern.test(file))), []);
});
