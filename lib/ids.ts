// Resource ids: a type prefix and 20 random lowercase base-36 characters (~103 bits), so they are also
// valid in DNS names and Kubernetes object names.
import { randomInt } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

export function randomString(length: number, alphabet = ALPHABET): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export function newId(prefix: 'org' | 'usr' | 'mem' | 'dep' | 'key' | 'rtk' | 'aud' | 'idem' | 'evt' | 'whs' | 'wha' | 'sso' | 'ssl' | 'inv' | 'emv' | 'role' | 'ffl' | 'err' | 'rpt' | 'clu' | 'ntf' | 'svk' | 'mdl' | 'pre' | 'opt' | 'alr' | 'alt' | 'ale' | 'cre' | 'rep' | 'usi' | 'usc' | 'ivc' | 'chk' | 'pev' | 'sec' | 'cev'): string {
  return `${prefix}_${randomString(20)}`;
}

/** What an organization id looks like, as input is checked (looser on length than newId makes them). */
export const ORGANIZATION_ID_PATTERN = /^org_[0-9a-z]{1,64}$/;
