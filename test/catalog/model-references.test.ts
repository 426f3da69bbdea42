// The one rule for model references (catalog/deployment-rules.ts), as the API (400 INVALID_MODEL) and the
// vllm-deployment stack apply it: Hugging Face ids with an optional revision, s3/gs locations and
// PersistentVolumeClaim paths, each taken apart for whoever loads it.
import test from 'ava';
import { isLoadableModel, LOADABLE_MODEL, parseModelReference } from '../../catalog/deployment-rules.ts';
import { checkModel } from '../../stacks/vllm-deployment/validate.ts';

test('Hugging Face ids load with or without hf:// and a revision (branch, tag, commit or refs/pr/N)', (t) => {
  t.deepEqual(parseModelReference('ibm-granite/granite-3.1-8b-instruct'), { kind: 'huggingface', repo: 'ibm-granite/granite-3.1-8b-instruct' });
  t.deepEqual(parseModelReference('hf://Qwen/Qwen2.5-7B@v1.0'), { kind: 'huggingface', repo: 'Qwen/Qwen2.5-7B', revision: 'v1.0' });
  t.deepEqual(parseModelReference('org/model@refs/pr/12'), { kind: 'huggingface', repo: 'org/model', revision: 'refs/pr/12' });
  t.deepEqual(parseModelReference('org/model@5f0b02c75b57c5855da9ae460ce51323ea669d8a'),
    { kind: 'huggingface', repo: 'org/model', revision: '5f0b02c75b57c5855da9ae460ce51323ea669d8a' });
  for (const model of ['org/model@', 'org/model@@x', 'org/model@a b', 'org/model@-x', 'org', 'hf://org']) t.false(isLoadableModel(model), model);
});

test('storage locations: s3 and gs buckets, and a path in a PersistentVolumeClaim that never climbs out of it', (t) => {
  t.deepEqual(parseModelReference('s3://acme-models/llama/8b'), { kind: 's3', bucket: 'acme-models', path: 'llama/8b' });
  t.deepEqual(parseModelReference('gs://acme-weights/mistral'), { kind: 'gs', bucket: 'acme-weights', path: 'mistral' });
  t.deepEqual(parseModelReference('pvc://model-store/qwen/7b-ft'), { kind: 'pvc', claim: 'model-store', path: 'qwen/7b-ft' });
  t.deepEqual(parseModelReference('pvc://models/a..b/c'), { kind: 'pvc', claim: 'models', path: 'a..b/c' });
  for (const model of ['pvc://models', 'pvc://models/', 'pvc://Models/x', 'pvc://models/../x', 'pvc://models/a/../../x', 'pvc://models/..', 'pvc://-x/y', 'pvc://m/a b']) {
    t.false(isLoadableModel(model), model);
    t.is(parseModelReference(model), undefined, model);
  }
  // The OpenAPI document's pattern is the same rule.
  t.true(LOADABLE_MODEL.test('pvc://model-store/qwen/7b-ft'));
});

test('the vllm-deployment stack accepts exactly what the API accepts', (t) => {
  for (const model of ['org/model@main', 'hf://org/model@v2', 'pvc://model-store/llama', 's3://bucket/llama']) t.is(checkModel(model), model);
  for (const model of ['pvc://models/../etc', 'org/model@']) t.throws(() => checkModel(model), { message: /Kiln can load: .*pvc:\/\/<claim>\/<path>/ });
});
