// Every signing key derives from the one configured secret (HKDF-SHA256 with a label per use), so a
// deployment manages a single secret and no two uses share a key.
import { hkdfSync } from 'node:crypto';
import { createKeyRing, type KeyRing } from './secret-box.ts';

export type KeyPurpose = 'jwt' | 'cursor' | 'idempotency' | 'webhook-secrets' | 'sso-secrets' | 'cluster-kubeconfigs' | 'organization-secrets';

export function deriveKey(secret: string, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'kiln', `kiln/${purpose}/v1`, 32));
}

/**
 * The key ring of organizations' secrets (control-plane/secrets/): each configured secret (KILN_SECRETS_KEY,
 * then KILN_SECRETS_PREVIOUS_KEYS) stretched to an AES key the same way, the first one current.
 */
export function organizationSecretsKeyRing(current: string, previous: readonly string[]): KeyRing {
  return createKeyRing(deriveKey(current, 'organization-secrets'), previous.map((p) => deriveKey(p, 'organization-secrets')));
}
