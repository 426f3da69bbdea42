// The passphrase secrets provider's cryptography, in this process, as the Pulumi CLI does it (Go: sdk
// go/common/resource/config/crypt.go, pkg secrets/passphrase/manager.go): a key is PBKDF2-SHA256 of the
// passphrase and a stack's 8-byte salt, 1,000,000 iterations; a value is `v1:<nonce>:<ciphertext>`, AES-256-GCM
// with a 12-byte nonce, base64, the tag after the ciphertext; a salt's line (`encryptionsalt`) is
// `v1:<salt>:` then "pulumi" encrypted, so a wrong passphrase is told at once. Each key costs about 0.2
// CPU-seconds, so a process makes one salt for all the stacks it creates and derives each key once.
import { createCipheriv, createDecipheriv, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const derive = promisify(pbkdf2);
const CHECK = 'pulumi';

/** Encrypts config values under one stack's salt line; its key is derived on first use. */
export interface Encrypter {
  readonly saltLine: string;
  encrypt(plaintext: string): Promise<string>;
}

function encryptWith(key: Buffer, plaintext: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1:${nonce.toString('base64')}:${sealed.toString('base64')}`;
}

function decryptWith(key: Buffer, value: string): string | undefined {
  const [version, nonce, sealed] = value.split(':');
  if (version !== 'v1' || !nonce || !sealed) return undefined;
  const bytes = Buffer.from(sealed, 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64'));
    decipher.setAuthTag(bytes.subarray(-16));
    return Buffer.concat([decipher.update(bytes.subarray(0, -16)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

const deriveKey = (passphrase: string, salt: Buffer) => derive(passphrase, salt, 1_000_000, 32, 'sha256');

/** Keys by passphrase and salt line, each derived once per process. */
const keys = new Map<string, Promise<Buffer>>();
const keyName = (passphrase: string, saltLine: string) => JSON.stringify([passphrase, saltLine]);

/** The key of a salt line; fails as the CLI does when the passphrase is not the one the line was made with. */
function keyOf(passphrase: string, saltLine: string): Promise<Buffer> {
  const name = keyName(passphrase, saltLine);
  if (!keys.has(name)) {
    const key = (async () => {
      const [version, salt] = saltLine.split(':');
      if (version !== 'v1' || !salt) throw new Error('malformed encryptionsalt');
      const derived = await deriveKey(passphrase, Buffer.from(salt, 'base64'));
      if (decryptWith(derived, saltLine.slice(`v1:${salt}:`.length)) !== CHECK) throw new Error('incorrect passphrase');
      return derived;
    })();
    keys.set(name, key);
    // A failure is not kept: the next use tries again.
    key.catch(() => keys.delete(name));
  }
  return keys.get(name)!;
}

/** The encrypter of an existing stack's salt line. */
export function encrypterFor(passphrase: string, saltLine: string): Encrypter {
  return { saltLine, encrypt: async (plaintext) => encryptWith(await keyOf(passphrase, saltLine), plaintext) };
}

const made = new Map<string, Promise<Encrypter>>();
/** This process's salt line for new stacks (one per passphrase), with its encrypter. */
export function newStackEncrypter(passphrase: string): Promise<Encrypter> {
  if (!made.has(passphrase)) {
    made.set(passphrase, (async () => {
      const salt = randomBytes(8);
      const key = await deriveKey(passphrase, salt);
      const saltLine = `v1:${salt.toString('base64')}:${encryptWith(key, CHECK)}`;
      keys.set(keyName(passphrase, saltLine), Promise.resolve(key));
      return encrypterFor(passphrase, saltLine);
    })());
  }
  return made.get(passphrase)!;
}
