import { compareNatural } from './natural-order';

describe('compareNatural', () => {
  it('compares digit runs as numbers', () => {
    const keys = ['compute.g2.16', 'compute.g2.4', 'compute.g2.2', 'compute.g10.1', 'compute.g2.32'];
    expect([...keys].sort(compareNatural)).toEqual([
      'compute.g2.2',
      'compute.g2.4',
      'compute.g2.16',
      'compute.g2.32',
      'compute.g10.1',
    ]);
  });

  it('compares other runs by code point', () => {
    expect(['storage.st1', 'storage.io1', 'storage.gp1'].sort(compareNatural)).toEqual([
      'storage.gp1',
      'storage.io1',
      'storage.st1',
    ]);
    expect(compareNatural('compute.B1.2', 'compute.a1.2')).toBeLessThan(0);
  });

  it('orders digit runs longer than any number exactly', () => {
    expect(compareNatural('compute.x.99999999999999999999', 'compute.x.100000000000000000000')).toBeLessThan(0);
  });

  it('is total: leading zeros fall back to code point order, equal keys are equal', () => {
    expect(compareNatural('compute.g2.04', 'compute.g2.4')).toBeLessThan(0);
    expect(compareNatural('compute.g2.4', 'compute.g2.04')).toBeGreaterThan(0);
    expect(compareNatural('compute.g2.4', 'compute.g2.4')).toBe(0);
  });

  it('puts a prefix first', () => {
    expect(compareNatural('compute.g2', 'compute.g2.4')).toBeLessThan(0);
  });
});
