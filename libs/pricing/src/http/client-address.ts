import { isIP } from 'node:net';
import compileTrust from 'proxy-addr';
import type { TrustProxy } from '../options/pricing-options';

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
 * proxies; an element counts as its address with or without a port (`203.0.113.7:4711`,
 * `[2001:db8::1]:443`, as some load balancers write them). An element that is no address ends the
 * walk (`onMalformed` is called), and the client is the last valid address seen (at worst the
 * socket's), so no header text ever becomes a rate-limit key. Linear in the header's length.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trusted: TrustedHop | undefined,
  onMalformed?: () => void,
): string | undefined {
  if (!trusted || socketAddress === undefined || forwardedFor === undefined) return socketAddress;
  let client = socketAddress;
  if (!trusted(client, 0)) return client;
  let end = forwardedFor.length;
  for (let hop = 1; end >= 0; hop++) {
    const start = forwardedFor.lastIndexOf(',', end - 1) + 1;
    const candidate = forwardedAddress(forwardedFor.slice(start, end));
    if (candidate === undefined) {
      onMalformed?.();
      break;
    }
    client = candidate;
    if (!trusted(client, hop) || start === 0) break;
    end = start - 1;
  }
  return client;
}

/** An IPv6 address with a zone and brackets, and a port, is shorter than this. */
const MAX_ELEMENT_LENGTH = 64;

/**
 * The address of one element of X-Forwarded-For: an IPv4 or IPv6 address, `IPv4:port`, or
 * `[IPv6]` with an optional `:port` (a port is a number up to 65535); `undefined` for anything
 * else. Long elements are refused before any parsing.
 */
export function forwardedAddress(element: string): string | undefined {
  const text = element.length > MAX_ELEMENT_LENGTH ? '' : element.trim();
  if (text === '') return undefined;
  if (text.charCodeAt(0) === 0x5b /* [ */) {
    const close = text.indexOf(']');
    const address = text.slice(1, close);
    const rest = text.slice(close + 1);
    return close > 0 && isIP(address) === 6 && (rest === '' || isPortSuffix(rest)) ? address : undefined;
  }
  if (isIP(text) !== 0) return text;
  const colon = text.indexOf(':');
  if (colon < 0 || text.indexOf(':', colon + 1) >= 0) return undefined; // IPv6 without brackets takes no port
  const address = text.slice(0, colon);
  return isIP(address) === 4 && isPortSuffix(text.slice(colon)) ? address : undefined;
}

/** `:` and a port number (1 to 5 digits, at most 65535). */
function isPortSuffix(text: string): boolean {
  if (text.length < 2 || text.length > 6 || text.charCodeAt(0) !== 0x3a) return false;
  for (let i = 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return Number(text.slice(1)) <= 65535;
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
