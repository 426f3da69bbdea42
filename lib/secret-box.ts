// Secrets Kiln must use again later (webhook signing secrets) are stored encrypted: AES-256-GCM under a key
// derived from the configured signing secret, a fresh 96-bit nonce each, `v1.<nonce>.<ciphertext+tag>`.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export function createSecretBox(key: Buffer): SecretBox {
  return {
    seal(plaintext) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `v1.${nonce.toString('base64url')}.${body.toString('base64url')}`;
    },
    open(sealed) {
      const [version, nonce, body] = sealed.split('.');
      if (version !== 'v1' || !nonce || !body) throw new Error('not a sealed secret');
      const data = Buffer.from(body, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAuthTag(data.subarray(-16));
      return Buffer.concat([decipher.update(data.subarray(0, -16)), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * A secret box over several keys, for values that must survive a key rotation (organizations' secrets): it
 * seals under the current key as `v2.<key id>.<nonce>.<ciphertext+tag>` and opens under whichever key the
 * value names, the current one or a previous one, so values sealed before a rotation still open while they
 * are re-sealed. A key's id is derived from the key itself, so configuration lists keys and nothing else.
 */
export interface KeyRing extends SecretBox {
  /** The id of the key `seal` uses. */
  readonly currentKeyId: string;
  /** Whether a sealed value is under the current key (false: re-seal it). */
  isCurrent(sealed: string): boolean;
}

export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 10);
}

export function createKeyRing(current: Buffer, previous: readonly Buffer[] = []): KeyRing {
  const currentKeyId = keyIdOf(current);
  const keys = new Map<string, Buffer>([...previous.map((k) => [keyIdOf(k), k] as const), [currentKeyId, current]]);
  return {
    currentKeyId,
    seal(plaintext) {
      return `v2.${currentKeyId}.${createSecretBox(current).seal(plaintext).slice('v1.'.length)}`;
    },
    open(sealed) {
      const [version, keyId, nonce, body, extra] = sealed.split('.');
      const key = keyId === undefined ? undefined : keys.get(keyId);
      if (version !== 'v2' || !nonce || !body || extra !== undefined) throw new Error('not a sealed secret');
      // Never the value, nor the key: only that the key it was sealed under is not configured any more.
      if (!key) throw new Error(`sealed under key ${keyId}, which is neither the current nor a previous key`);
      return createSecretBox(key).open(`v1.${nonce}.${body}`);
    },
    isCurrent(sealed) {
      return sealed.startsWith(`v2.${currentKeyId}.`);
    },
  };
}
