import { clientAddress, clientAddressKey, compileTrustProxy } from './client-address';

describe('clientAddress', () => {
  const loopback = compileTrustProxy('loopback');

  it('is the socket address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(clientAddress('127.0.0.1', '203.0.113.9', undefined)).toBe('127.0.0.1');
    expect(compileTrustProxy(false)).toBeUndefined();
    expect(compileTrustProxy(0)).toBeUndefined();
  });

  it('is the socket address when the socket is not a trusted proxy', () => {
    expect(clientAddress('198.51.100.1', '203.0.113.9', loopback)).toBe('198.51.100.1');
  });

  it('walks X-Forwarded-For from the right through trusted hops', () => {
    expect(clientAddress('127.0.0.1', '203.0.113.9', loopback)).toBe('203.0.113.9');
    expect(clientAddress('127.0.0.1', '198.51.100.7, 203.0.113.9', loopback)).toBe('203.0.113.9');
    expect(clientAddress('127.0.0.1', '198.51.100.7, 127.0.0.2', loopback)).toBe('198.51.100.7');
    expect(clientAddress('127.0.0.1', ' 2001:db8::1 ', loopback)).toBe('2001:db8::1');
  });

  it.each([
    ['not an address', 'hello'],
    ['a port out of range', '203.0.113.9:65536'],
    ['a port that is no number', '203.0.113.9:http'],
    ['an empty port', '203.0.113.9:'],
    ['IPv6 with a port but no brackets', '2001:db8::1:443:x'],
    ['IPv4 in brackets', '[203.0.113.9]:80'],
    ['an unclosed bracket', '[2001:db8::1'],
    ['text after the brackets', '[2001:db8::1]x'],
    ['an empty element', ''],
    ['a very long value', 'x'.repeat(10_000)],
    ['a key of another client', '203.0.113.9/32'],
  ])('stops at a value that is not an IP address (%s): the last valid hop is the client', (_what, junk) => {
    const malformed = jest.fn();
    expect(clientAddress('127.0.0.1', junk, loopback, malformed)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', `${junk}, 203.0.113.9`, loopback)).toBe('203.0.113.9');
    expect(clientAddress('127.0.0.1', `203.0.113.9, ${junk}`, loopback, malformed)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', `203.0.113.9, ${junk}, 127.0.0.5`, loopback)).toBe('127.0.0.5');
    expect(malformed).toHaveBeenCalledTimes(2);
  });

  it.each([
    ['IPv4 with a port', '203.0.113.9:4711', '203.0.113.9'],
    ['IPv4 with the highest port', '203.0.113.9:65535', '203.0.113.9'],
    ['IPv6 in brackets', '[2001:db8::1]', '2001:db8::1'],
    ['IPv6 in brackets with a port', '[2001:db8::1]:443', '2001:db8::1'],
    ['IPv6 with a zone, in brackets with a port', '[fe80::1%eth0]:443', 'fe80::1%eth0'],
  ])('counts an element with a port as its address (%s)', (_what, element, address) => {
    const malformed = jest.fn();
    expect(clientAddress('127.0.0.1', element, loopback, malformed)).toBe(address);
    expect(clientAddress('127.0.0.1', `198.51.100.7, ${element}`, loopback, malformed)).toBe(address);
    expect(clientAddress('127.0.0.1', `198.51.100.7, ${element}, 127.0.0.2:80`, loopback)).toBe(address);
    expect(malformed).not.toHaveBeenCalled();
  });

  it('trusts a hop count as Express does: n hops from the socket', () => {
    const two = compileTrustProxy(2);
    expect(clientAddress('10.0.0.1', '203.0.113.1, 198.51.100.2, 10.0.0.2', two)).toBe('198.51.100.2');
    expect(clientAddress('10.0.0.1', '198.51.100.2', two)).toBe('198.51.100.2');
  });

  it('trusts every hop with true: the left-most valid address', () => {
    expect(clientAddress('10.0.0.1', '203.0.113.1, 198.51.100.2', compileTrustProxy(true))).toBe('203.0.113.1');
    expect(clientAddress('10.0.0.1', 'junk, 198.51.100.2', compileTrustProxy(true))).toBe('198.51.100.2');
  });

  it('trusts listed subnets', () => {
    const subnets = compileTrustProxy('10.0.0.0/8, 192.168.0.1');
    expect(clientAddress('10.1.2.3', '203.0.113.1, 192.168.0.1', subnets)).toBe('203.0.113.1');
    expect(clientAddress('10.1.2.3', '203.0.113.1, 192.168.0.2', subnets)).toBe('192.168.0.2');
  });
});

describe('clientAddressKey', () => {
  it('keys IPv4 as is, also mapped into IPv6', () => {
    expect(clientAddressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(clientAddressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
  });

  it('keys IPv6 by its /64, whatever its spelling', () => {
    const key = '2001:db8:1:2::/64';
    expect(clientAddressKey('2001:db8:1:2::1')).toBe(key);
    expect(clientAddressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe(key);
    expect(clientAddressKey('2001:DB8:1:2:abcd::9')).toBe(key);
    expect(clientAddressKey('2001:db8:1:2::1%eth0')).toBe(key);
    expect(clientAddressKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientAddressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
    expect(clientAddressKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });

  it('has one key for an unknown address', () => {
    expect(clientAddressKey(undefined)).toBe('unknown');
  });
});
