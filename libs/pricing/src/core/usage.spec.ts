import Decimal from 'decimal.js';
import type { UnitType } from '../catalogue/catalogue';
import { InvalidUsageError, PricingErrorCode } from '../errors/pricing-error';
import { byValidFrom, type PriceRecord } from './price-record';
import { priceRecord } from './price-record.fixture';
import { costOf, parseQuantity } from './quote';
import {
  costOfEvents,
  costOfUsage,
  roundForInvoice,
  sumCosts,
  type ApplicablePrices,
  type MeteredEvent,
  type UsageCost,
} from './usage';

// Instants of January and February 2026, at midnight UTC unless a time is given.
const jan = (day: number, time = '00:00:00.000') => new Date(`2026-01-${String(day).padStart(2, '0')}T${time}Z`);
const feb = (day: number, time = '00:00:00.000') => new Date(`2026-02-${String(day).padStart(2, '0')}T${time}Z`);

/** Each held price by the name a test gives it (its id is a number), to name the lines' prices. */
const names = new Map<PriceRecord, string>();
function named(name: string, fields: Parameters<typeof priceRecord>[0]): PriceRecord {
  const price = priceRecord(fields);
  names.set(price, name);
  return price;
}
const nameOf = (price: PriceRecord | null): string | null => (price && names.get(price)) ?? null;

// storage.gp1, per 730 GiB-hours: 0.0480 until 1 February, then 0.0500.
const listA = named('list-A', { amount: '0.0480', validFrom: jan(1), validUntil: feb(1) });
const listB = named('list-B', { amount: '0.0500', validFrom: feb(1) });
/** The prices that apply, each scope sorted by valid_from as the prices in memory hold them. */
const prices = (list: PriceRecord[], organization: PriceRecord[] = []): ApplicablePrices => ({
  list: [...list].sort(byValidFrom),
  organization: [...organization].sort(byValidFrom),
});
const orgPrice = (id: string, validFrom: Date, validUntil: Date | null) =>
  named(id, { organizationId: 'org-1', amount: '0.0400', validFrom, validUntil });

/** Each line as [from, to, price id or null, quantity, cost], for exact comparison. */
function rows(cost: UsageCost) {
  return cost.lines.map((line) => [
    line.from.toISOString(),
    line.to.toISOString(),
    nameOf(line.price),
    line.quantity,
    line.cost,
  ]);
}

const volume = (from: Date, to: Date) => ({ from, to, sizeGib: '100' });

/** What `run` threw, which must be an InvalidUsageError (fails the test when nothing is thrown). */
function refusal(run: () => unknown): InvalidUsageError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidUsageError);
    return error as InvalidUsageError;
  }
  throw new Error('expected a refusal, nothing was thrown');
}

describe('costOfUsage, GiB-hours', () => {
  it('prices an interval inside one window as one line', () => {
    const cost = costOfUsage(prices([listA, listB]), 'gib_hours', volume(jan(20), jan(21)));
    // 100 GiB × 24 h = 2,400 GiB-hours × 0.0480 / 730.
    expect(rows(cost)).toEqual([
      ['2026-01-20T00:00:00.000Z', '2026-01-21T00:00:00.000Z', 'list-A', '2400', '0.15780821917808219178'],
    ]);
    expect(cost.total).toBe('0.15780821917808219178');
    expect(cost.complete).toBe(true);
    expect(cost.lines[0]).toMatchObject({ priced: true, price: listA });
  });

  it('splits at a scheduled change: part at the old price, part at the new', () => {
    const cost = costOfUsage(prices([listB, listA]), 'gib_hours', volume(jan(20), feb(15)));
    expect(rows(cost)).toEqual([
      ['2026-01-20T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'list-A', '28800', '1.89369863013698630137'],
      ['2026-02-01T00:00:00.000Z', '2026-02-15T00:00:00.000Z', 'list-B', '33600', '2.30136986301369863014'],
    ]);
    expect(cost.total).toBe('4.19506849315068493151');
    expect(cost.complete).toBe(true);
  });

  it('uses an organization price that starts and ends inside the interval, across a list change', () => {
    const org = orgPrice('org', jan(25), feb(5));
    const cost = costOfUsage(prices([listA, listB], [org]), 'gib_hours', volume(jan(20), feb(15)));
    // The list change of 1 February happens under the organization's price: no split there.
    expect(rows(cost)).toEqual([
      ['2026-01-20T00:00:00.000Z', '2026-01-25T00:00:00.000Z', 'list-A', '12000', '0.7890410958904109589'],
      ['2026-01-25T00:00:00.000Z', '2026-02-05T00:00:00.000Z', 'org', '26400', '1.44657534246575342466'],
      ['2026-02-05T00:00:00.000Z', '2026-02-15T00:00:00.000Z', 'list-B', '24000', '1.64383561643835616438'],
    ]);
    expect(cost.total).toBe('3.87945205479452054794');
    expect(cost.lines[1].price?.organizationId).toBe('org-1');
  });

  it('uses an organization price that started before the interval and ends inside it', () => {
    const org = orgPrice('org', jan(1), jan(25));
    const cost = costOfUsage(prices([listA, listB], [org]), 'gib_hours', volume(jan(20), feb(15)));
    expect(rows(cost)).toEqual([
      ['2026-01-20T00:00:00.000Z', '2026-01-25T00:00:00.000Z', 'org', '12000', '0.65753424657534246575'],
      ['2026-01-25T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'list-A', '16800', '1.10465753424657534247'],
      ['2026-02-01T00:00:00.000Z', '2026-02-15T00:00:00.000Z', 'list-B', '33600', '2.30136986301369863014'],
    ]);
    expect(cost.total).toBe('4.06356164383561643836');
  });

  it('returns a gap with no price as an explicit unpriced line, and says the total is incomplete', () => {
    const later = named('list-C', { amount: '0.0500', validFrom: feb(3) });
    const cost = costOfUsage(prices([listA, later]), 'gib_hours', volume(jan(20), feb(15)));
    expect(rows(cost)).toEqual([
      ['2026-01-20T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'list-A', '28800', '1.89369863013698630137'],
      ['2026-02-01T00:00:00.000Z', '2026-02-03T00:00:00.000Z', null, '4800', null],
      ['2026-02-03T00:00:00.000Z', '2026-02-15T00:00:00.000Z', 'list-C', '28800', '1.97260273972602739726'],
    ]);
    expect(cost.lines[1]).toMatchObject({ priced: false, price: null, cost: null });
    expect(cost.total).toBe('3.86630136986301369863');
    expect(cost.complete).toBe(false);
  });

  it('returns the rest of the interval as unpriced when a list price ends with no successor', () => {
    const cost = costOfUsage(prices([listA]), 'gib_hours', volume(jan(20), feb(15)));
    expect(rows(cost)).toEqual([
      ['2026-01-20T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'list-A', '28800', '1.89369863013698630137'],
      ['2026-02-01T00:00:00.000Z', '2026-02-15T00:00:00.000Z', null, '33600', null],
    ]);
    expect(cost.total).toBe('1.89369863013698630137');
    expect(cost.complete).toBe(false);
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
      from: new Date(feb(1).getTime() - 1),
      to: new Date(feb(1).getTime() + 1),
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
      to: new Date(jan(2).getTime() + 1),
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
      to: new Date(jan(2).getTime() + 7001),
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
    const cost = costOfUsage(prices([hourly]), 'seconds', { from: jan(2), to: new Date(jan(2).getTime() + 5_400_001) });
    // 5,400.001 s × 0.0610 / 3,600 = 0.091500016944…
    expect(rows(cost)).toEqual([
      ['2026-01-02T00:00:00.000Z', '2026-01-02T01:30:00.001Z', 'g2.4', '5400.001', '0.09150001694444444444'],
    ]);
  });

  it('rounds each line once, half-even, to 20 places', () => {
    const tiny = (amount: string) =>
      prices([priceRecord({ amount, unitType: 'seconds', unitCount: 1, validFrom: jan(1) })]);
    const oneSecond = { from: jan(2), to: new Date(jan(2).getTime() + 1000) };
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

describe('costOfEvents', () => {
  // network.vpc_egress, per GB: 0.0100 until 1 February, then 0.0080.
  const egress = (id: string, amount: string, validFrom: Date, validUntil: Date | null = null) =>
    named(id, { productKey: 'network.vpc_egress', unitType: 'gb', unitCount: 1, amount, validFrom, validUntil });
  const egressA = egress('egress-A', '0.0100', jan(1), feb(1));
  const egressB = egress('egress-B', '0.0080', feb(1));

  it('prices each event at its instant: at valid_from the new price, never the ended one', () => {
    const cost = costOfEvents(prices([egressA, egressB]), 'gb', [
      { at: jan(20), quantity: '1.5' },
      { at: feb(1), bytes: 2_500_000_000n },
      { at: jan(31, '23:59:59.999'), quantity: '0.25' },
    ]);
    expect(rows(cost)).toEqual([
      ['2026-01-20T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'egress-A', '1.75', '0.0175'],
      ['2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.001Z', 'egress-B', '2.5', '0.02'],
    ]);
    expect(cost.total).toBe('0.0375');
    expect(cost.complete).toBe(true);
  });

  it('leaves an event at the valid_until of a price with no successor unpriced', () => {
    const cost = costOfEvents(prices([egressA]), 'gb', [
      { at: jan(31, '23:59:59.999'), quantity: '1' },
      { at: feb(1), quantity: '2' },
    ]);
    expect(rows(cost)).toEqual([
      ['2026-01-31T23:59:59.999Z', '2026-02-01T00:00:00.000Z', 'egress-A', '1', '0.01'],
      ['2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.001Z', null, '2', null],
    ]);
    expect(cost.total).toBe('0.01');
    expect(cost.complete).toBe(false);
  });

  it('groups the unpriced events of one gap into one line, and leaves out windows without events', () => {
    const march = egress('egress-C', '0.0050', new Date('2026-03-01T00:00:00Z'));
    const february = egress('egress-F', '0.0090', feb(10), new Date('2026-03-01T00:00:00Z'));
    const cost = costOfEvents(prices([march, egressA, february]), 'gb', [
      { at: new Date('2026-03-05T12:00:00Z'), quantity: '10' },
      { at: feb(3), quantity: '1' },
      { at: jan(5), quantity: '4' },
      { at: feb(2), quantity: '0.5' },
      { at: new Date('2026-03-02T00:00:00Z'), quantity: '10' },
    ]);
    expect(rows(cost)).toEqual([
      ['2026-01-05T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'egress-A', '4', '0.04'],
      ['2026-02-01T00:00:00.000Z', '2026-02-10T00:00:00.000Z', null, '1.5', null],
      ['2026-03-01T00:00:00.000Z', '2026-03-05T12:00:00.001Z', 'egress-C', '20', '0.1'],
    ]);
    expect(cost.total).toBe('0.14');
    expect(cost.complete).toBe(false);
  });

  it('uses the organization price where it is in force', () => {
    const org = named('egress-org', {
      productKey: 'network.vpc_egress',
      unitType: 'gb',
      unitCount: 1,
      organizationId: 'org-1',
      amount: '0.0050',
      validFrom: jan(10),
      validUntil: jan(20),
    });
    const cost = costOfEvents(prices([egressA], [org]), 'gb', [
      { at: jan(5), quantity: '1' },
      { at: jan(10), quantity: '1' },
      { at: jan(20), quantity: '1' },
    ]);
    expect(rows(cost)).toEqual([
      ['2026-01-05T00:00:00.000Z', '2026-01-10T00:00:00.000Z', 'egress-A', '1', '0.01'],
      ['2026-01-10T00:00:00.000Z', '2026-01-20T00:00:00.000Z', 'egress-org', '1', '0.005'],
      ['2026-01-20T00:00:00.000Z', '2026-01-20T00:00:00.001Z', 'egress-A', '1', '0.01'],
    ]);
  });

  it('converts bytes to decimal GB exactly (GB = bytes / 10^9)', () => {
    const cost = costOfEvents(prices([egressA]), 'gb', [
      { at: jan(5), bytes: 1n },
      { at: jan(5), bytes: '999999999' },
      { at: jan(6), bytes: 10n ** 30n },
    ]);
    expect(cost.lines[0].quantity).toBe('1000000000000000000001');
    expect(cost.lines[0].cost).toBe('10000000000000000000.01');
  });

  it('sums the events of a window before rounding once', () => {
    const thirds = priceRecord({
      productKey: 'observability.api_request',
      unitType: 'requests',
      unitCount: 3,
      amount: '1',
    });
    const cost = costOfEvents(prices([thirds]), 'requests', [
      { at: jan(5), quantity: '1' },
      { at: jan(6), quantity: 1n },
    ]);
    // 2/3 rounded once; rounding each event would give 0.33333333333333333333 × 2.
    expect(cost.lines[0].cost).toBe('0.66666666666666666667');
  });

  it('has no lines for no events', () => {
    expect(costOfEvents(prices([egressA]), 'gb', [])).toEqual({ lines: [], total: '0', complete: true });
  });

  describe('refuses', () => {
    const refused = (unitType: UnitType, events: unknown[]) => {
      const error = refusal(() => costOfEvents(prices([egressA]), unitType, events as MeteredEvent[]));
      return [error.message, error.details.field];
    };

    it('bytes outside gb', () => {
      expect(refused('requests', [{ at: jan(5), bytes: '10' }])).toEqual([
        'events[0].bytes: bytes are accepted for gb only, not requests',
        'events[0].bytes',
      ]);
    });

    it('a byte count that is not whole, and quantities that are not non-negative decimals', () => {
      expect(
        refused('gb', [
          { at: jan(5), quantity: '1' },
          { at: jan(5), bytes: '1.5' },
        ]),
      ).toEqual(['events[1].bytes is not a whole number of bytes: 1.5', 'events[1].bytes']);
      expect(refused('gb', [{ at: jan(5), quantity: 2 }])).toEqual([
        'events[0].quantity is not a non-negative decimal: 2',
        'events[0].quantity',
      ]);
      expect(refused('gb', [{ at: jan(5), bytes: -1n }])).toEqual([
        'events[0].bytes is not a non-negative decimal: -1',
        'events[0].bytes',
      ]);
    });

    it('an event without exactly one of quantity and bytes', () => {
      expect(refused('gb', [{ at: jan(5) }])).toEqual(['events[0] has neither quantity nor bytes', 'events[0]']);
      expect(refused('gb', [{ at: jan(5), quantity: '1', bytes: '1' }])).toEqual([
        'events[0] has both quantity and bytes: give one',
        'events[0].bytes',
      ]);
    });

    it('an event without a valid instant', () => {
      expect(
        refused('gb', [
          { at: jan(5), quantity: '1' },
          { at: new Date(NaN), quantity: '1' },
        ]),
      ).toEqual(['events[1].at is not a valid Date', 'events[1].at']);
    });

    it.each(['seconds', 'gib_hours'] as const)('events of a time-based family (%s)', (unitType) => {
      expect(refused(unitType, [{ at: jan(5), quantity: '1' }])).toEqual([
        `${unitType} is a time-based unit: price the usage with costOfUsage`,
        'unitType',
      ]);
    });
  });
});

describe('sumCosts', () => {
  it('adds costs exactly, where a default decimal.js sum loses digits', () => {
    const costs = ['12345678901234567890.12345678901234567891', '0.00000000000000000009'];
    expect(sumCosts(costs)).toBe('12345678901234567890.123456789012345679');
    expect(new Decimal(costs[0]).plus(costs[1]).toFixed()).toBe('12345678901234567890');
    expect(sumCosts(['0.1', '0.2'])).toBe('0.3');
    expect(sumCosts(['1.5', '2.5', '3'])).toBe('7');
    expect(sumCosts([])).toBe('0');
  });

  it('drops trailing zeros, as its documentation says (docs/using-pricing.md)', () => {
    expect(sumCosts(['0.10', '0.20'])).toBe('0.3');
    expect(sumCosts(['1.5', '2.5'])).toBe('4');
    expect(sumCosts(['0.00000000000000000010', '0'])).toBe('0.0000000000000000001');
  });

  it.each(['1e3', '-1', '', '.5'])('refuses %p', (cost) => {
    expect(() => sumCosts([cost])).toThrow(`not a decimal cost: ${cost}`);
  });
});

describe('roundForInvoice', () => {
  it('rounds to the cent, half up, always with two decimals', () => {
    expect(roundForInvoice('3.15616438356164383562')).toBe('3.16');
    expect(roundForInvoice('1.80821917808219178082')).toBe('1.81');
    expect(roundForInvoice('0.005')).toBe('0.01');
    expect(roundForInvoice('0.00499999999999999999')).toBe('0.00');
    expect(roundForInvoice('2.675')).toBe('2.68'); // 2.67499999... as a float; exact here
    expect(roundForInvoice('0.015')).toBe('0.02'); // half up, not half-even (0.02 either way)
    expect(roundForInvoice('0.025')).toBe('0.03'); // half-even would give 0.02
    expect(roundForInvoice('2')).toBe('2.00');
    expect(roundForInvoice('0.1')).toBe('0.10');
    expect(roundForInvoice('0')).toBe('0.00');
    expect(roundForInvoice('12345678901234567890.995')).toBe('12345678901234567891.00');
  });

  it.each(['1e3', '-1', '', '.5', ' 1', '1.', '01'])('refuses %p', (cost) => {
    expect(() => roundForInvoice(cost)).toThrow(`not a decimal cost: ${cost}`);
  });

  it('refuses a float', () => {
    expect(() => roundForInvoice(4.965 as unknown as string)).toThrow('not a decimal cost: 4.965');
  });

  it('one month of one volume: each line rounded then added is 4.97, its total rounded would be 4.96', () => {
    // 100 GiB through March 2026 (744 hours); the list price rises from 0.0480 to 0.0500 per
    // 730 GiB-hours on 21 March: 480 hours at the first, 264 at the second.
    const march = (day: number) => new Date(`2026-03-${String(day).padStart(2, '0')}T00:00:00Z`);
    const before = named('march-A', { amount: '0.0480', validFrom: jan(1), validUntil: march(21) });
    const after = named('march-B', { amount: '0.0500', validFrom: march(21) });
    const usage = costOfUsage(prices([before, after]), 'gib_hours', {
      from: march(1),
      to: new Date('2026-04-01T00:00:00Z'),
      sizeGib: '100',
    });
    expect(usage.lines.map((line) => [line.quantity, line.cost])).toEqual([
      ['48000', '3.15616438356164383562'],
      ['26400', '1.80821917808219178082'],
    ]);
    const lines = usage.lines.map((line) => roundForInvoice(line.cost!));
    expect(lines).toEqual(['3.16', '1.81']);
    expect(roundForInvoice(sumCosts(lines))).toBe('4.97'); // the invoice: the sum of its rounded lines
    expect(usage.total).toBe('4.96438356164383561644');
    expect(roundForInvoice(usage.total)).toBe('4.96'); // the total rounded: not the invoice's rule
  });
});
