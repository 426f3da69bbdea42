// Access tokens: a verified token is remembered, but never past its expiry and never for another token.
import test from 'ava';
import { SignJWT } from 'jose';
import { deriveKey } from '../../lib/keys.ts';
import { createAccessTokens } from '../../control-plane/auth/tokens.ts';

const SIGNING_KEY = 'unit-signing-key-0123456789abcdefghijklmnop';

function tokenExpiringIn(seconds: number) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ org: 'org_a' }).setProtectedHeader({ alg: 'HS256' }).setSubject('usr_a').setIssuer('kiln').setAudience('kiln-api')
    .setIssuedAt(now).setExpirationTime(now + seconds).sign(deriveKey(SIGNING_KEY, 'jwt'));
}

test('a token verified once is refused as expired once its expiry passes', async (t) => {
  const tokens = createAccessTokens(SIGNING_KEY);
  const token = await tokenExpiringIn(2);
  t.deepEqual(await tokens.verify(token), { userId: 'usr_a', organizationId: 'org_a' });
  t.deepEqual(await tokens.verify(token), { userId: 'usr_a', organizationId: 'org_a' }, 'remembered');
  await new Promise((resolve) => setTimeout(resolve, 2100));
  await t.throwsAsync(tokens.verify(token), { message: 'Token expired' });
});

test('a verified token does not vouch for an altered copy or one signed with another key', async (t) => {
  const tokens = createAccessTokens(SIGNING_KEY);
  const token = await tokens.issue({ userId: 'usr_a', organizationId: 'org_a' });
  await tokens.verify(token);
  const [header, payload, signature] = token.split('.');
  const otherPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), org: 'org_b' })).toString('base64url');
  await t.throwsAsync(tokens.verify(`${header}.${otherPayload}.${signature}`), { message: 'Invalid API key' });
  await t.throwsAsync(createAccessTokens('another-signing-key-0123456789abcdefghijkl').verify(token), { message: 'Invalid API key' });
});
