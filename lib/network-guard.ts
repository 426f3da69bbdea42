// Part of the webhook contract (SSRF guard): in production a webhook URL must be http(s) and resolve only
// to public addresses. The API checks it when a subscription is made; the delivery activity checks it again
// at every send, and connects only to an address it checked (publicOnlyLookup), so a name re-pointed in
// between (DNS rebinding) cannot lead it inside.
import { lookup as lookupCallback, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(net, prefix, 'ipv4');
// 64:ff9b::/96 is NAT64: it reaches the IPv4 address in its last 32 bits, private ones included.
for (const [net, prefix] of [['::', 128], ['::1', 128], ['64:ff9b::', 96], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv6');
}

export class PrivateUrlError extends Error {}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  return family === 0 || PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export async function assertPublicUrl(raw: string): Promise<void> {
  const url = new URL(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new PrivateUrlError(`${url.protocol} URLs are not allowed`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  const blocked = addresses.find(isPrivateAddress);
  if (blocked) throw new PrivateUrlError(`${url.hostname} resolves to ${blocked}, a loopback, private or link-local address`);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for node:http(s) that resolves as the system does and refuses any private address. */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  lookupCallback(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '');
    const blocked = addresses.find((a) => isPrivateAddress(a.address));
    if (blocked) return callback(Object.assign(new PrivateUrlError(`${hostname} resolves to ${blocked.address}, a loopback, private or link-local address`), { code: 'EPRIVATE' }), '');
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
