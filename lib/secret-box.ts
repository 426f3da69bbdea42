// Secrets Kiln must use again later (webhook signing secrets) are stored encrypted: AES-256-GCM under a key
// derived from the configured signing secret, a fresh 96-bit nonce each, `v1.<nonce>.<ciphertext+tag>`.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

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
