// Every signing key derives from the one configured secret (HKDF-SHA256 with a label per use), so a
// deployment manages a single secret and no two uses share a key.
import { hkdfSync } from 'node:crypto';

export type KeyPurpose = 'jwt' | 'cursor' | 'idempotency' | 'webhook-secrets' | 'sso-secrets' | 'cluster-kubeconfigs';

export function deriveKey(secret: string, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'kiln', `kiln/${purpose}/v1`, 32));
}
