import { compareNatural, sortNatural } from './natural-order';

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

describe('sortNatural', () => {
  it('sorts items by key in the order of compareNatural', () => {
    const keys = [
      'compute.g2.16',
      'compute.a.1',
      'compute.g2.04',
      'compute.a1',
      'compute.g2.4',
      'compute.g10.1',
      'compute.g2.2',
    ];
    const items = keys.map((key) => ({ key }));
    expect(sortNatural(items, (i) => i.key).map((i) => i.key)).toEqual([...keys].sort(compareNatural));
    expect([...keys].sort(compareNatural)).toEqual([
      'compute.a1',
      'compute.a.1',
      'compute.g2.2',
      'compute.g2.04',
      'compute.g2.4',
      'compute.g2.16',
      'compute.g10.1',
    ]);
  });
});

/** The rule of section 2.2 written out run by run, as the reference for the encoded sort key. */
function referenceCompare(a: string, b: string): number {
  const runsA = a.match(/\d+|\D+/g) ?? [];
  const runsB = b.match(/\d+|\D+/g) ?? [];
  const cmp = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  for (let i = 0; i < Math.min(runsA.length, runsB.length); i++) {
    const [x, y] = [runsA[i], runsB[i]];
    if (/^\d/.test(x) && /^\d/.test(y)) {
      const [p, q] = [x.replace(/^0+(?=\d)/, ''), y.replace(/^0+(?=\d)/, '')];
      const order = p.length - q.length || cmp(p, q);
      if (order !== 0) return order;
    } else if (x !== y) {
      return cmp(x, y);
    }
  }
  return runsA.length - runsB.length || cmp(a, b);
}

describe('compareNatural against the rule written out run by run', () => {
  it('agrees on the sign for many random keys', () => {
    let seed = 42;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = 'ab._0123456789';
    const keys = Array.from({ length: 400 }, () =>
      Array.from({ length: 1 + random(8) }, () => alphabet[random(alphabet.length)]).join(''),
    );
    for (const a of keys) {
      for (const b of keys.slice(0, 60)) {
        expect([a, b, Math.sign(compareNatural(a, b))]).toEqual([a, b, Math.sign(referenceCompare(a, b))]);
      }
    }
  });
});
