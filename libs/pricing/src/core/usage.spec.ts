import Decimal from 'decimal.js';
import { PricingErrorCode } from '../errors/pricing-error';
import { priceRecord } from './price-record.fixture';
import { costOf, parseQuantity } from './quote';
import { costOfUsage, sumCosts } from './usage';
import {
  jan,
  feb,
  named,
  nameOf,
  listA,
  listB,
  prices,
  orgPrice,
  rows,
  expectCost,
  volume,
  refusal,
} from './usage.fixture';

describe('costOfUsage, GiB-hours', () => {
  /**
   * 100 GiB from 20 January to 15 February at list A, then B, and the organization's price from
   * `validFrom` until `validUntil`.
   */
  const withOrganization = (validFrom: Date, validUntil: Date) =>
    costOfUsage(
      prices([listA, listB], [orgPrice('org', validFrom, validUntil)]),
      'gib_hours',
      volume(jan(20), feb(15)),
    );

  it('prices an interval inside one window as one line', () => {
    const cost = costOfUsage(prices([listA, listB]), 'gib_hours', volume(jan(20), jan(21)));
    // 100 GiB × 24 h = 2,400 GiB-hours × 0.0480 / 730.
    expectCost(cost, { total: '0.15780821917808219178', complete: true }, [
      ['2026-01-20T00:00:00.000Z', '2026-01-21T00:00:00.000Z', 'list-A', '2400', '0.15780821917808219178'],
    ]);
    expect(cost.lines[0]).toMatchObject({ priced: true, price: listA });
  });

  it('splits at a scheduled change: part at the old price, part at the new', () => {
    const cost = costOfUsage(prices([listB, listA]), 'gib_hours', volume(jan(20), feb(15)));
    expectCost(cost, { total: '4.19506849315068493151', complete: true }, [
      ['2026-01-20T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'list-A', '28800', '1.89369863013698630137'],
      ['2026-02-01T00:00:00.000Z', '2026-02-15T00:00:00.000Z', 'list-B', '33600', '2.30136986301369863014'],
    ]);
  });

  it('uses an organization price that starts and ends inside the interval, across a list change', () => {
    const cost = withOrganization(jan(25), feb(5));
    // The list change of 1 February happens under the organization's price: no split there.
    expectCost(cost, { total: '3.87945205479452054794', complete: true }, [
      ['2026-01-20T00:00:00.000Z', '2026-01-25T00:00:00.000Z', 'list-A', '12000', '0.7890410958904109589'],
      ['2026-01-25T00:00:00.000Z', '2026-02-05T00:00:00.000Z', 'org', '26400', '1.44657534246575342466'],
      ['2026-02-05T00:00:00.000Z', '2026-02-15T00:00:00.000Z', 'list-B', '24000', '1.64383561643835616438'],
    ]);
    expect(cost.lines[1].price?.organizationId).toBe('org-1');
  });

  it('uses an organization price that started before the interval and ends inside it', () => {
    expectCost(withOrganization(jan(1), jan(25)), { total: '4.06356164383561643836', complete: true }, [
      ['2026-01-20T00:00:00.000Z', '2026-01-25T00:00:00.000Z', 'org', '12000', '0.65753424657534246575'],
      ['2026-01-25T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'list-A', '16800', '1.10465753424657534247'],
      ['2026-02-01T00:00:00.000Z', '2026-02-15T00:00:00.000Z', 'list-B', '33600', '2.30136986301369863014'],
    ]);
  });

  it('returns a gap with no price as an explicit unpriced line, and says the total is incomplete', () => {
    const later = named('list-C', { amount: '0.0500', validFrom: feb(3) });
    const cost = costOfUsage(prices([listA, later]), 'gib_hours', volume(jan(20), feb(15)));
    expectCost(cost, { total: '3.86630136986301369863', complete: false }, [
      ['2026-01-20T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'list-A', '28800', '1.89369863013698630137'],
      ['2026-02-01T00:00:00.000Z', '2026-02-03T00:00:00.000Z', null, '4800', null],
      ['2026-02-03T00:00:00.000Z', '2026-02-15T00:00:00.000Z', 'list-C', '28800', '1.97260273972602739726'],
    ]);
    expect(cost.lines[1]).toMatchObject({ priced: false, price: null, cost: null });
  });

  it('returns the rest of the interval as unpriced when a list price ends with no successor', () => {
    const cost = costOfUsage(prices([listA]), 'gib_hours', volume(jan(20), feb(15)));
    expectCost(cost, { total: '1.89369863013698630137', complete: false }, [
      ['2026-01-20T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'list-A', '28800', '1.89369863013698630137'],
      ['2026-02-01T00:00:00.000Z', '2026-02-15T00:00:00.000Z', null, '33600', null],
    ]);
  });

  it('returns usage entirely in a gap as one unpriced line, total 0 and incomplete', () => {
    for (const cost of [
      costOfUsage(prices([listA]), 'gib_hours', volume(feb(2), feb(3))),
      costOfUsage(prices([listA]), 'gib_hours', volume(new Date('2025-12-01T00:00:00Z'), jan(1))),
      costOfUsage(prices([]), 'gib_hours', volume(feb(2), feb(3))),
    ]) {
      expect(cost.lines).toHaveLength(1);
      expect(cost.lines[0]).toMatchObject({ priced: false, price: null, cost: null });
      expect(cost.total).toBe('0');
      expect(cost.complete).toBe(false);
    }
    expect(rows(costOfUsage(prices([listA]), 'gib_hours', volume(feb(2), feb(3))))).toEqual([
      ['2026-02-02T00:00:00.000Z', '2026-02-03T00:00:00.000Z', null, '2400', null],
    ]);
  });

  it('gives no empty line for an interval that ends or starts exactly at a boundary', () => {
    expect(rows(costOfUsage(prices([listA, listB]), 'gib_hours', volume(jan(20), feb(1))))).toEqual([
      ['2026-01-20T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'list-A', '28800', '1.89369863013698630137'],
    ]);
    expect(rows(costOfUsage(prices([listA, listB]), 'gib_hours', volume(feb(1), feb(15))))).toEqual([
      ['2026-02-01T00:00:00.000Z', '2026-02-15T00:00:00.000Z', 'list-B', '33600', '2.30136986301369863014'],
    ]);
    // Ending exactly where the only price ends: no unpriced line after it.
    expect(costOfUsage(prices([listA]), 'gib_hours', volume(jan(20), feb(1))).complete).toBe(true);
  });

  it('prices the millisecond on each side of a boundary at its own price', () => {
    const cost = costOfUsage(prices([listA, listB]), 'gib_hours', {
      from: jan(31, '23:59:59.999'),
      to: feb(1, '00:00:00.001'),
      sizeGib: '1',
    });
    expect(rows(cost)).toEqual([
      [
        '2026-01-31T23:59:59.999Z',
        '2026-02-01T00:00:00.000Z',
        'list-A',
        '0.00000027777777777778',
        '0.00000000001826484018',
      ],
      [
        '2026-02-01T00:00:00.000Z',
        '2026-02-01T00:00:00.001Z',
        'list-B',
        '0.00000027777777777778',
        '0.00000000001902587519',
      ],
    ]);
  });

  it('has no lines for a zero-length interval, and a complete total of 0', () => {
    expect(costOfUsage(prices([listA, listB]), 'gib_hours', volume(feb(1), feb(1)))).toEqual({
      lines: [],
      total: '0',
      complete: true,
    });
    expect(costOfUsage(prices([]), 'gib_hours', volume(feb(2), feb(2))).complete).toBe(true);
  });

  it('computes the cost from the exact GiB-hours, not from the rounded quantity it shows', () => {
    const dear = named('dear', { amount: '1000000', unitCount: 1, validFrom: jan(1) });
    const cost = costOfUsage(prices([dear]), 'gib_hours', {
      from: jan(2),
      to: jan(2, '00:00:00.001'),
      sizeGib: 1n,
    });
    // 1 GiB for 1 ms = 1/3,600,000 GiB-hours, which does not terminate in decimal.
    expect(cost.lines[0].quantity).toBe('0.00000027777777777778');
    // 1,000,000 / 3,600,000 = 0.2777…, rounded once; the rounded quantity would give 0.27777777777778.
    expect(cost.lines[0].cost).toBe('0.27777777777777777778');
    expect(new Decimal('1000000').times(cost.lines[0].quantity).toFixed()).toBe('0.27777777777778');
  });

  it('is exact for a fractional size and a duration that is not a whole number of hours', () => {
    const cost = costOfUsage(prices([listA]), 'gib_hours', {
      from: jan(2),
      to: jan(2, '00:00:07.001'),
      sizeGib: '1.5',
    });
    // 1.5 × 7,001 / 3,600,000 = 0.00291708333…; × 0.0480 / 730.
    expect(rows(cost)).toEqual([
      [
        '2026-01-02T00:00:00.000Z',
        '2026-01-02T00:00:07.001Z',
        'list-A',
        '0.00291708333333333333',
        '0.00000019180821917808',
      ],
    ]);
  });

  it('gives the same lines whatever the order the records were read in (each scope is sorted once, when held)', () => {
    const org = orgPrice('org', jan(25), feb(5));
    const c = named('list-C', { amount: '0.0600', validFrom: new Date('2026-03-01T00:00:00Z') });
    const b = named('list-B2', {
      amount: '0.0500',
      validFrom: feb(1),
      validUntil: new Date('2026-03-01T00:00:00Z'),
    });
    const usage = volume(jan(20), new Date('2026-03-10T00:00:00Z'));
    const sorted = costOfUsage(prices([listA, b, c], [org]), 'gib_hours', usage);
    expect(costOfUsage(prices([c, listA, b], [org]), 'gib_hours', usage)).toEqual(sorted);
    expect(sorted.lines.map((line) => nameOf(line.price))).toEqual(['list-A', 'org', 'list-B2', 'list-C']);
  });

  it('adds the line costs exactly into the total', () => {
    const cost = costOfUsage(prices([listA, listB]), 'gib_hours', volume(jan(20), feb(15)));
    expect(cost.total).toBe(sumCosts(cost.lines.map((line) => line.cost ?? '0')));
  });
});

describe('costOfUsage, seconds', () => {
  const hourly = named('g2.4', {
    productKey: 'compute.g2.4',
    unitType: 'seconds',
    unitCount: 3600,
    amount: '0.0610',
    validFrom: jan(1),
  });

  it('counts seconds exactly to the millisecond', () => {
    const cost = costOfUsage(prices([hourly]), 'seconds', { from: jan(2), to: jan(2, '01:30:00.001') });
    // 5,400.001 s × 0.0610 / 3,600 = 0.091500016944…
    expect(rows(cost)).toEqual([
      ['2026-01-02T00:00:00.000Z', '2026-01-02T01:30:00.001Z', 'g2.4', '5400.001', '0.09150001694444444444'],
    ]);
  });

  it('rounds each line once, half-even, to 20 places', () => {
    const tiny = (amount: string) =>
      prices([priceRecord({ amount, unitType: 'seconds', unitCount: 1, validFrom: jan(1) })]);
    const oneSecond = { from: jan(2), to: jan(2, '00:00:01.000') };
    expect(costOfUsage(tiny('0.000000000000000000025'), 'seconds', oneSecond).total).toBe('0.00000000000000000002');
    expect(costOfUsage(tiny('0.000000000000000000035'), 'seconds', oneSecond).total).toBe('0.00000000000000000004');
    expect(costOfUsage(tiny('0.000000000000000000005'), 'seconds', oneSecond).total).toBe('0');
    expect(costOfUsage(tiny('0.0000000000000000000251'), 'seconds', oneSecond).total).toBe('0.00000000000000000003');
  });

  it('agrees with costOf (quote) on the same quantity', () => {
    for (const ms of [1, 999, 1000, 3_599_999, 86_400_000, 2_678_400_123]) {
      for (const [amount, unitCount] of [
        ['0.0610', 3600],
        ['1', 7],
        ['123456789.123456789', 2147483647],
      ] as const) {
        const price = priceRecord({ amount, unitCount, unitType: 'seconds', validFrom: jan(1) });
        const line = costOfUsage(prices([price]), 'seconds', { from: jan(2), to: new Date(jan(2).getTime() + ms) })
          .lines[0];
        expect(line.cost).toBe(costOf(price, parseQuantity(line.quantity)!));
      }
    }
  });
});

describe('costOfUsage refuses', () => {
  it('an interval that ends before it starts', () => {
    const error = refusal(() => costOfUsage(prices([listA]), 'gib_hours', volume(feb(15), jan(20))));
    expect(error.message).toBe(
      'usage ends before it starts: from 2026-02-15T00:00:00.000Z is after to 2026-01-20T00:00:00.000Z',
    );
    expect(error.code).toBe(PricingErrorCode.InvalidUsage);
    expect(error.details).toEqual({ field: 'to', from: '2026-02-15T00:00:00.000Z', to: '2026-01-20T00:00:00.000Z' });
  });

  it('an invalid date', () => {
    expect(refusal(() => costOfUsage(prices([listA]), 'gib_hours', volume(new Date('nope'), feb(1)))).message).toBe(
      'from is not a valid Date',
    );
    const notADate = '2026-02-01T00:00:00Z' as unknown as Date;
    expect(refusal(() => costOfUsage(prices([listA]), 'gib_hours', volume(jan(20), notADate))).message).toBe(
      'to is not a valid Date',
    );
  });

  it('GiB-hours without a size, and seconds with one', () => {
    expect(refusal(() => costOfUsage(prices([listA]), 'gib_hours', { from: jan(20), to: feb(1) })).message).toBe(
      'gib_hours need sizeGib, the size in GiB',
    );
    expect(refusal(() => costOfUsage(prices([]), 'seconds', { from: jan(20), to: feb(1), sizeGib: '1' })).message).toBe(
      'seconds are priced without a size: sizeGib must be absent',
    );
  });

  it.each<[unknown, string]>([
    ['-1', '-1'],
    [-1n, '-1'],
    [1.5, '1.5'],
    ['1e3', '1e3'],
    ['', ''],
  ])('a size of %p', (sizeGib, shown) => {
    const error = refusal(() =>
      costOfUsage(prices([listA]), 'gib_hours', { from: jan(20), to: feb(1), sizeGib: sizeGib as string }),
    );
    expect(error.message).toBe(`sizeGib is not a non-negative decimal: ${shown}`);
    expect(error.details).toEqual({ field: 'sizeGib', quantity: shown });
  });

  it.each(['gb', 'requests', 'samples', 'metric_months'] as const)('metered usage (%s)', (unitType) => {
    expect(refusal(() => costOfUsage(prices([]), unitType, { from: jan(20), to: feb(1) })).message).toBe(
      `${unitType} is a metered unit: price its events with costOfEvents`,
    );
  });

  it('a price of another unit than the family (the database refuses such a record)', () => {
    expect(() => costOfUsage(prices([listA]), 'seconds', { from: jan(20), to: feb(1) })).toThrow(
      `price ${listA.id} of storage.gp1 is per gib_hours, not seconds`,
    );
  });
});
