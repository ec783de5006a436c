import { isIPv6 } from 'node:net';
import { ipKeyGenerator } from 'express-rate-limit';

/**
 * The rate-limit key of a client address: IPv4 as is (also when mapped into IPv6), IPv6 by
 * its /64, since one subscriber usually holds a whole /64.
 */
export function clientAddressKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  if (!ip.includes(':')) return ip; // IPv4, the common case: no parsing
  if (ip.startsWith('::ffff:') && ip.includes('.')) return ip.slice(7);
  return isIPv6(ip) ? ipKeyGenerator(ip, 64) : ip;
}
