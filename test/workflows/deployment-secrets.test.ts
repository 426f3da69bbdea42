// The worker's side of secrets (workflows/deployment/secrets.ts): a rollout opens the values of the secrets a
// deployment mounts, under the same key ring as the API, records their use, and fails for good, naming the
// secret and never its value, when one is gone, another organization's, or sealed under a key no longer known.
import test from 'ava';
import { ApplicationFailure } from '@temporalio/activity';
import { organizationSecretsKeyRing } from '../../lib/keys.ts';
import { secretValues } from '../../workflows/deployment/secrets.ts';
import { signup, startTestApi, type TestApi } from '../support/control-plane.ts';

const TEST_SIGNING_KEY = 'test-signing-key-0123456789abcdefghijklmnop';
let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

async function secret(token: string, body: Record<string, string>) {
  const res = await api.request('POST', '/v1/secrets', { token, body });
  if (res.status !== 201) throw new Error(`secret creation failed: ${res.status}`);
  return res.body.id as string;
}

test('a rollout gets each mounted variable\'s value and the secrets\' last use is recorded', async (t) => {
  const owner = await signup(api, 'worker-secrets');
  const hf = await secret(owner.token, { name: 'hf', type: 'huggingface_token', value: 'hf_workerToken0001' });
  const docker = await secret(owner.token, { name: 'docker', type: 'registry_password', registry: 'https://registry.example.com', username: 'bot', password: 'registry-pass-0001' });
  const values = secretValues(api.orm, organizationSecretsKeyRing(TEST_SIGNING_KEY, []));
  t.deepEqual(await values.open(owner.organizationId, [{ name: 'HF_TOKEN', secretId: hf }, { name: 'REGISTRY_PASSWORD', secretId: docker }]),
    { HF_TOKEN: 'hf_workerToken0001', REGISTRY_PASSWORD: 'registry-pass-0001' });
  const { rows } = await api.pool.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM organization_secret WHERE organization_id = $1', [owner.organizationId]);
  t.true(rows.every((r) => r.last_used_at !== null));
});

test('a missing or another organization\'s secret, or one sealed under an unknown key, fails for good without its value', async (t) => {
  const [owner, other] = [await signup(api, 'worker-owner'), await signup(api, 'worker-other')];
  const theirs = await secret(other.token, { name: 'hf', type: 'huggingface_token', value: 'hf_otherOrgToken01' });
  const mine = await secret(owner.token, { name: 'hf', type: 'huggingface_token', value: 'hf_ownerToken00001' });
  const values = secretValues(api.orm, organizationSecretsKeyRing(TEST_SIGNING_KEY, []));
  const missing = await t.throwsAsync(values.open(owner.organizationId, [{ name: 'HF_TOKEN', secretId: theirs }]), { instanceOf: ApplicationFailure });
  t.like(missing, { type: 'SecretMissing', nonRetryable: true });
  const otherKey = secretValues(api.orm, organizationSecretsKeyRing('another-secrets-key-0123456789abcdefghijk', []));
  const sealed = await t.throwsAsync(otherKey.open(owner.organizationId, [{ name: 'HF_TOKEN', secretId: mine }]), { instanceOf: ApplicationFailure });
  t.like(sealed, { type: 'SecretSealed', nonRetryable: true });
  t.false(sealed!.message.includes('hf_ownerToken00001'));
});
