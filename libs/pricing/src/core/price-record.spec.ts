import fc from 'fast-check';
import { priceRecord } from './price-record.fixture';
import { byValidFrom, isInForce, nextEdgeAfter, priceInForceAt, type PriceRecord } from './price-record';

// The one shape of a price (price-record.ts): instants as epoch milliseconds,
// strings shared through a StringPool, each scope's prices sorted and bisected. That an instant
// reads back as the text it was set with is instant.properties.spec.ts's (formatInstant and
// parseInstant, years 0000 to 9999) and, through the database, test/price-list.e2e-spec.ts's.

describe('isInForce', () => {
  const price = priceRecord({ validFrom: '2026-01-01T00:00:00Z', validUntil: '2026-02-01T00:00:00Z' });
  const from = price.validFrom;
  const until = price.validUntil!;

  it('is from validFrom (inclusive) to validUntil (exclusive), to the millisecond', () => {
    expect([from - 1, from, until - 1, until].map((ms) => isInForce(price, ms))).toEqual([false, true, true, false]);
  });

  it('has no end when validUntil is null', () => {
    const open = priceRecord({ validFrom: '2026-01-01T00:00:00Z' });
    expect([from - 1, from, Number.MAX_SAFE_INTEGER].map((ms) => isInForce(open, ms))).toEqual([false, true, true]);
  });
});

/**
 * The prices of one key and scope as a snapshot holds them: sorted by `validFrom`, never
 * overlapping, some back to back, some with gaps between, the last one perhaps open; instants
 * from a small range around the epoch (before 1970 too).
 */
const oneScope: fc.Arbitrary<PriceRecord[]> = fc
  .record({
    edges: fc.uniqueArray(fc.integer({ min: -50, max: 50 }), { maxLength: 12 }),
    priced: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
    openEnd: fc.boolean(),
  })
  .map(({ edges, priced, openEnd }) => {
    const sorted = [...edges].sort((a, b) => a - b);
    const prices = sorted
      .slice(0, -1)
      .flatMap((validFrom, i) => (priced[i] ? [priceRecord({ validFrom, validUntil: sorted[i + 1] })] : []));
    if (openEnd && sorted.length > 0) prices.push(priceRecord({ validFrom: sorted[sorted.length - 1] }));
    return prices;
  });
/** A scope and an instant: often on one of its edges or next to one, else anywhere around them. */
const scopeAndProbe: fc.Arbitrary<[PriceRecord[], number]> = oneScope.chain((prices) => {
  const near = prices.flatMap(({ validFrom, validUntil }) =>
    [validFrom, validUntil ?? validFrom].flatMap((edge) => [edge - 1, edge, edge + 1]),
  );
  const anywhere = fc.integer({ min: -60, max: 60 });
  return fc.tuple(fc.constant(prices), near.length === 0 ? anywhere : fc.oneof(anywhere, fc.constantFrom(...near)));
});

describe('priceInForceAt and nextEdgeAfter on one scope', () => {
  it('priceInForceAt finds by bisection the price a scan of every price finds', () => {
    fc.assert(
      fc.property(scopeAndProbe, ([prices, ms]) => {
        expect(priceInForceAt(prices, ms)).toBe(prices.find((price) => isInForce(price, ms)));
      }),
    );
  });

  it('nextEdgeAfter is the first start or end after the instant: the same price until it, another from it', () => {
    fc.assert(
      fc.property(scopeAndProbe, ([prices, ms]) => {
        const edges = prices.flatMap((price) =>
          price.validUntil === null ? [price.validFrom] : [price.validFrom, price.validUntil],
        );
        const edge = nextEdgeAfter(prices, ms);
        expect(edge).toBe(Math.min(Infinity, ...edges.filter((at) => at > ms)));
        const now = priceInForceAt(prices, ms);
        if (edge === Infinity) return;
        expect(priceInForceAt(prices, edge - 1)).toBe(now);
        expect(priceInForceAt(prices, edge)).not.toBe(now);
      }),
    );
  });

  it('byValidFrom sorts a scope as they need it', () => {
    const [a, b, c] = [-5, 0, 7].map((validFrom) => priceRecord({ validFrom, validUntil: validFrom + 1 }));
    expect([c, a, b].sort(byValidFrom)).toEqual([a, b, c]);
    expect(priceInForceAt([a, b, c], 0)).toBe(b);
  });
});
