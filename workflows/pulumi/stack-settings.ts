// A stack's settings file (`Pulumi.<stack>.yaml` in its workspace folder) written whole by Kiln in place of
// `pulumi config set-all`, a CLI run that costs about half a CPU-second, most of it deriving the passphrase's key
// (Go: sdk go/common/workspace/project.go ProjectStack; a secret is `{ secure: <ciphertext> }`).
import { join } from 'node:path';
import { writeAtomically } from './state-folder.ts';
import type { Encrypter } from './passphrase.ts';

/** Stack configuration, `namespace:key` to value. */
export type StackConfig = Readonly<Record<string, { value: string; secret?: boolean }>>;

/**
 * A YAML double-quoted scalar: JSON's escapes are YAML's too; the characters YAML 1.1 readers (the CLI's
 * yaml.v3) take for line breaks or refuse raw are escaped as well.
 */
const quoted = (text: string) => JSON.stringify(text).replace(/[\u007f-\u009f\u2028\u2029\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

export function stackSettingsPath(workDir: string, stackName: string): string {
  return join(workDir, `Pulumi.${stackName}.yaml`);
}

/** Writes the stack's salt line and exactly this configuration, its secrets encrypted under that salt. */
export async function writeStackSettings(path: string, encrypter: Encrypter, config: StackConfig): Promise<void> {
  const lines = [`encryptionsalt: ${quoted(encrypter.saltLine)}`];
  const entries = Object.entries(config);
  if (entries.length) lines.push('config:');
  for (const [key, { value, secret }] of entries) {
    lines.push(secret ? `  ${quoted(key)}:\n    secure: ${quoted(await encrypter.encrypt(value))}` : `  ${quoted(key)}: ${quoted(value)}`);
  }
  await writeAtomically(path, `${lines.join('\n')}\n`);
}
