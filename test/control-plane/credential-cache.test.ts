// The per-replica credential cache: a hit skips the lookup; forget() drops what a change touches at once,
// a lookup that raced a change is not kept, and an entry in use is reloaded before it runs out.
import { ROLE_PERMISSIONS } from '../../control-plane/core/permissions.ts';
import test from 'ava';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../control-plane/auth/principal.ts';
import { CREDENTIAL_CACHE_MS, createCredentialCache, REFRESH_AFTER_MS } from '../../control-plane/auth/credential-cache.ts';
import { UnauthenticatedError } from '../../control-plane/core/errors.ts';
import type { OrganizationAccess } from '../../control-plane/organizations/service.ts';

const em = {} as EntityManager;
const KEY = 'sk_test_0123456789abcdefghijklmnopqrstuv';

function setup(options: { keyLookup?: () => Promise<Principal>; now?: () => number; staleWhileUnavailable?: { databaseAvailable(): boolean; maxAgeMs: number } } = {}) {
  const calls = { keys: 0, access: 0 };
  const principal: Principal = {
    kind: 'api_key', userId: 'usr_a', organizationId: 'org_a', plan: 'free', role: 'owner', permissions: ROLE_PERMISSIONS.owner, scope: 'full_access', apiKeyId: 'key_a', platformAdmin: false,
  };
  const access: OrganizationAccess = { role: 'member', permissions: ROLE_PERMISSIONS.member, plan: 'free', platformAdmin: false };
  const cache = createCredentialCache({ now: options.now, staleWhileUnavailable: options.staleWhileUnavailable });
  const wrapped = cache.wrap({
    apiKeys: { resolve: async () => { calls.keys++; return options.keyLookup ? options.keyLookup() : principal; } },
    organizations: { access: async (_em, userId) => { calls.access++; return userId === 'usr_gone' ? null : access; } },
  });
  return { cache, wrapped, calls, principal };
}

test('a credential resolved once is not looked up again', async (t) => {
  const { wrapped, calls, principal } = setup();
  t.deepEqual(await wrapped.apiKeys.resolve(em, KEY), principal);
  t.deepEqual(await wrapped.apiKeys.resolve(em, KEY), principal);
  await wrapped.organizations.access(em, 'usr_a', 'org_a');
  await wrapped.organizations.access(em, 'usr_a', 'org_a');
  t.deepEqual(calls, { keys: 1, access: 1 });
});

test('a refusal is never kept', async (t) => {
  const { wrapped, calls } = setup();
  t.is(await wrapped.organizations.access(em, 'usr_gone', 'org_a'), null);
  t.is(await wrapped.organizations.access(em, 'usr_gone', 'org_a'), null);
  t.is(calls.access, 2);
});

test('forget drops a key, a membership (with the keys acting through it) or a whole organization', async (t) => {
  const { cache, wrapped, calls } = setup();
  const fill = async () => {
    await wrapped.apiKeys.resolve(em, KEY);
    await wrapped.organizations.access(em, 'usr_a', 'org_a');
  };
  await fill();
  cache.forget({ apiKeyId: 'key_other' });
  cache.forget({ userId: 'usr_b', organizationId: 'org_a' });
  await fill();
  t.deepEqual(calls, { keys: 1, access: 1 });
  cache.forget({ apiKeyId: 'key_a' });
  await fill();
  t.deepEqual(calls, { keys: 2, access: 1 });
  cache.forget({ userId: 'usr_a', organizationId: 'org_a' });
  await fill();
  t.deepEqual(calls, { keys: 3, access: 2 });
  cache.forget({ organizationId: 'org_a' });
  await fill();
  t.deepEqual(calls, { keys: 4, access: 3 });
});

test('a lookup that was under way when a change was made is not kept', async (t) => {
  let release!: () => void;
  const { cache, wrapped, calls, principal } = setup({ keyLookup: () => new Promise((resolve) => { release = () => resolve(principal); }) });
  const pending = wrapped.apiKeys.resolve(em, KEY);
  cache.forget({ apiKeyId: 'key_a' });
  release();
  await pending;
  const again = wrapped.apiKeys.resolve(em, KEY);
  release();
  await again;
  t.is(calls.keys, 2);
});

test('an entry used past REFRESH_AFTER_MS is reloaded in the background, once; a reload that is refused drops it', async (t) => {
  let clock = 0;
  let refuse = false;
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const { wrapped, calls, principal } = setup({
    now: () => clock,
    keyLookup: async () => {
      if (refuse) throw new UnauthenticatedError('revoked');
      return principal;
    },
  });
  await wrapped.apiKeys.resolve(em, KEY);
  clock = REFRESH_AFTER_MS - 1;
  await wrapped.apiKeys.resolve(em, KEY);
  t.is(calls.keys, 1, 'young: no reload');

  clock = REFRESH_AFTER_MS;
  t.deepEqual(await wrapped.apiKeys.resolve(em, KEY), principal, 'answered from the entry');
  await wrapped.apiKeys.resolve(em, KEY);
  await settle();
  t.is(calls.keys, 2, 'one reload in the background');
  // The reloaded entry lives from its reload: past the first one's end, still no wait.
  clock = CREDENTIAL_CACHE_MS + 1;
  await wrapped.apiKeys.resolve(em, KEY);
  t.is(calls.keys, 2);

  // The key is revoked: the next reload drops the entry, and the request after it looks the key up (and is refused).
  refuse = true;
  clock = REFRESH_AFTER_MS * 2 + 1;
  await wrapped.apiKeys.resolve(em, KEY);
  await settle();
  t.is(calls.keys, 3);
  await t.throwsAsync(wrapped.apiKeys.resolve(em, KEY), { message: 'revoked' });
  t.is(calls.keys, 4);
});

test('a reload the database cannot answer keeps the entry: a gateway answers it past its time while the database is away', async (t) => {
  let clock = 0;
  let databaseUp = true;
  let monitorSaysUp = true; // the health probe sees an outage a moment after the lookups do
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const { wrapped, calls, principal } = setup({
    now: () => clock,
    staleWhileUnavailable: { databaseAvailable: () => monitorSaysUp, maxAgeMs: 60_000 },
    keyLookup: async () => {
      if (!databaseUp) throw new Error('Connection terminated unexpectedly');
      return principal;
    },
  });
  await wrapped.apiKeys.resolve(em, KEY);
  // The database goes away just as the entry is due a reload: the reload fails, and the entry stays.
  databaseUp = false;
  clock = REFRESH_AFTER_MS;
  t.deepEqual(await wrapped.apiKeys.resolve(em, KEY), principal);
  await settle();
  t.is(calls.keys, 2, 'the reload was tried');
  // Past its time, the outage now seen: answered from the entry, with no lookup.
  monitorSaysUp = false;
  clock = CREDENTIAL_CACHE_MS + 1;
  t.deepEqual(await wrapped.apiKeys.resolve(em, KEY), principal);
  t.is(calls.keys, 2);
});

test('an entry not used runs out at CREDENTIAL_CACHE_MS, however often it was before', async (t) => {
  let clock = 0;
  const { wrapped, calls } = setup({ now: () => clock });
  await wrapped.organizations.access(em, 'usr_a', 'org_a');
  clock = CREDENTIAL_CACHE_MS;
  await wrapped.organizations.access(em, 'usr_a', 'org_a');
  t.is(calls.access, 2, 'looked up again, waited for');
});
