import fc from 'fast-check';
import { isIP } from 'node:net';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { clientAddress, clientAddressKey, compileTrustProxy, forwardedAddress } from './client-address';
import { anyCodePoint } from '../../../../test/support/outside-text';

// X-Forwarded-For is text a client chooses (a proxy appends to what it was sent).
describe('X-Forwarded-For, as any client may write it', () => {
  const everyHop = compileTrustProxy(true);
  const loopback = compileTrustProxy('loopback');
  const element = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 70_000 })).map(([ip, port]) => `${ip}:${port}`),
    fc.tuple(fc.ipV6(), fc.integer({ min: 0, max: 70_000 })).map(([ip, port]) => `[${ip}]:${port}`),
    fc.string({ unit: anyCodePoint, maxLength: 80 }),
  );
  const header = fc.oneof(
    fc.string({ unit: anyCodePoint, maxLength: 2000 }),
    fc.array(element, { maxLength: 20 }).map((elements) => elements.join(', ')),
  );

  it('never throws, and the client is the socket or an IP address taken from the header', () => {
    fc.assert(
      fc.property(header, fc.constantFrom(everyHop, loopback, undefined), (forwardedFor, trusted) => {
        const client = clientAddress('127.0.0.1', forwardedFor, trusted);
        expect(client === '127.0.0.1' || (client !== undefined && isIP(client) !== 0)).toBe(true);
        expect(typeof clientAddressKey(client)).toBe('string');
      }),
    );
  });

  it('takes an element with a valid port as its address, and nothing else than an address', () => {
    fc.assert(
      fc.property(element, (text) => {
        const address = forwardedAddress(text);
        if (address !== undefined) expect(isIP(address)).not.toBe(0);
      }),
    );
    fc.assert(
      fc.property(fc.ipV4(), fc.integer({ min: 0, max: 65_535 }), (ip, port) => {
        expect(forwardedAddress(`${ip}:${port}`)).toBe(ip);
        expect(forwardedAddress(`${ip}:${port + 65_536}`)).toBeUndefined();
      }),
    );
    fc.assert(
      fc.property(fc.ipV6(), fc.integer({ min: 0, max: 65_535 }), (ip, port) => {
        expect(forwardedAddress(`[${ip}]:${port}`)).toBe(ip);
        expect(forwardedAddress(` [${ip}] `)).toBe(ip);
      }),
    );
  });

  /** Valid elements joined by `separator` up to `length`: the header ends on a whole element, so all of it is walked. */
  const elements = (element: string, separator: string) => (length: number) =>
    Array.from({ length: Math.floor(length / (element.length + separator.length)) }, () => element).join(separator);

  it.each<[string, (length: number) => string]>([
    ['addresses, every hop trusted (the whole header is walked)', elements('203.0.113.9', ', ')],
    ['addresses with ports', elements('203.0.113.9:4711', ',')],
    ['IPv6 in brackets with ports', elements('[2001:db8::1]:443', ',')],
    ['commas', (n) => repeated(',', n)],
    ['spaces', (n) => repeated(' ', n)],
    ['brackets', (n) => repeated('[[[[', n)],
    ['one long element', (n) => repeated('a', n)],
  ])('is walked in linear time: %s', (_what, inputOfLength) => {
    expectLinearTime((text) => clientAddress('127.0.0.1', text, everyHop), inputOfLength);
  });

  it('walks every element of those headers (the time measured is the whole walk)', () => {
    const walked: string[] = [];
    const counting = compileTrustProxy(true)!;
    const trustedAndCounted = (address: string, hop: number) => (walked.push(address), counting(address, hop));
    expect(clientAddress('127.0.0.1', elements('[2001:db8::1]:443', ',')(16 * 1024), trustedAndCounted)).toBe(
      '2001:db8::1',
    );
    expect(walked).toHaveLength(1 + Math.floor((16 * 1024) / 18));
  });
});
