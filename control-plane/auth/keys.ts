// Every signing key derives from the one configured secret (HKDF-SHA256 with a label per use), so a
// deployment manages a single secret and no two uses share a key.
import { hkdfSync } from 'node:crypto';

export function deriveKey(secret: string, purpose: 'jwt' | 'cursor' | 'idempotency' | 'webhook-secrets' | 'sso-secrets' | 'cluster-kubeconfigs'): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'kiln', `kiln/${purpose}/v1`, 32));
}
