import { isIP } from 'node:net';
import compileTrust from 'proxy-addr';

/** Express's `trust proxy` values: `true`, a hop count, or addresses, subnets and names. */
export type TrustProxy = boolean | number | string;

/** Whether the hop `hop` away from us (0: the socket's peer), at `address`, is a trusted proxy. */
export type TrustedHop = (address: string, hop: number) => boolean;

/** Compiles a TRUST_PROXY value as Express does; `undefined` when no proxy is trusted. */
export function compileTrustProxy(value: TrustProxy): TrustedHop | undefined {
  if (value === false || value === 0 || value === '') return undefined;
  if (value === true) return () => true;
  if (typeof value === 'number') return (_address, hop) => hop < value;
  return compileTrust.compile(value.split(',').map((part) => part.trim()));
}

/**
 * The client's address: the socket's peer, or, when that peer is a trusted proxy, the address it
 * forwarded. `X-Forwarded-For` is walked from the right (the hop nearest to us) through trusted
 * proxies; a value that is not an IP address ends the walk, and the client is the last valid
 * address seen (at worst the socket's), so no header text ever becomes a rate-limit key.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trusted: TrustedHop | undefined,
): string | undefined {
  if (!trusted || socketAddress === undefined || forwardedFor === undefined) return socketAddress;
  let client = socketAddress;
  if (!trusted(client, 0)) return client;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1, hop = 1; i >= 0; i--, hop++) {
    const candidate = hops[i].trim();
    if (isIP(candidate) === 0) break;
    client = candidate;
    if (!trusted(client, hop)) break;
  }
  return client;
}

/**
 * The rate-limit key of a client address: IPv4 as is (also when mapped into IPv6), IPv6 by its
 * /64, since one subscriber usually holds a whole /64.
 */
export function clientAddressKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  if (!ip.includes(':')) return ip; // IPv4, the common case: no parsing
  if (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4) return ip.slice(7);
  const prefix = ipv6Prefix64(ip);
  return prefix === undefined ? ip : `${prefix}::/64`;
}

/** The first four groups of an IPv6 address, each without leading zeros. */
function ipv6Prefix64(ip: string): string | undefined {
  const address = ip.split('%')[0]; // a zone index is not part of the address
  if (isIP(address) !== 6) return undefined;
  const [head, tail] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  // An IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) stands for the last two groups.
  const tailCount = tailGroups.reduce((n, group) => n + (group.includes('.') ? 2 : 1), 0);
  const zeros = tail === undefined ? [] : Array<string>(8 - headGroups.length - tailCount).fill('0');
  const groups = [...headGroups, ...zeros, ...tailGroups];
  return groups
    .slice(0, 4)
    .map((group) => (group.includes('.') ? '0' : group.toLowerCase().replace(/^0+(?=.)/, '')))
    .join(':');
}
