// The worker opens the database, so it loads the ORM's entities: every area's `*.entity.ts`, which
// control-plane/database/entities.ts finds by name. It must not load the API with them: no routes, no GraphQL,
// nothing of payments (Stripe) but its entities, whether through its own imports or an entity file's.
import test from 'ava';
import { ENTITY_FILES } from '../../control-plane/database/entities.ts';
import { loadedWith } from '../support/imports.ts';

const API_ONLY = [/routes\.ts$/, /^control-plane\/graphql\//, /^control-plane\/payments\/(?!.*\.entity\.ts$)/];

test('the worker loads the database and its entities but none of the API', (t) => {
  const loaded = loadedWith('workflows/worker.ts');
  t.true(loaded.has('control-plane/database/entities.ts'));
  t.true(ENTITY_FILES.includes('deployments/deployment.entity.ts'));
  for (const file of ENTITY_FILES) for (const imported of loadedWith(`control-plane/${file}`)) loaded.add(imported);
  t.log(`workflows/worker.ts loads ${loaded.size} of Kiln's files`);
  t.deepEqual([...loaded].filter((file) => API_ONLY.some((pattern) => pattern.test(file))), []);
});
