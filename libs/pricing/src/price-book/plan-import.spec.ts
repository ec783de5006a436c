import type { PriceRecord } from '../core/price-record';
import { priceRecord } from '../core/price-record.fixture';
import { planImport, type ImportPlan } from './plan-import';
import { parsePriceBook, type PriceBook } from './price-book';
import { expectLinearTime } from '../../../../test/support/linear-time';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const gp1 = { product_key: 'storage.gp1', unit_type: 'gib_hours', unit_count: 730 };

function book(prices: object[], products: object[] = []): PriceBook {
  const parsed = parsePriceBook({ prices, products });
  if ('errors' in parsed) throw new Error(parsed.errors.join('\n'));
  return parsed.book;
}

function plan(prices: object[], stored: PriceRecord[] = [], products: object[] = []): ImportPlan {
  const planned = planImport(book(prices, products), stored, new Map(), NOW);
  if ('errors' in planned) throw new Error(planned.errors.join('\n'));
  return planned.plan;
}

function errors(prices: object[], stored: PriceRecord[] = []): readonly string[] {
  const planned = planImport(book(prices), stored, new Map(), NOW);
  return 'errors' in planned ? planned.errors : [];
}

describe('planImport', () => {
  const current = priceRecord({ id: 10, amount: '0.0480', validFrom: '2026-01-01T00:00:00Z' });

  it('inserts into an empty key, a past valid_from included (a backfill)', () => {
    const result = plan([{ ...gp1, amount: '0.05', valid_from: '2025-01-01T00:00:00Z' }]);
    expect(result.inserts).toEqual([
      expect.objectContaining({
        productKey: 'storage.gp1',
        amount: '0.05',
        validFrom: Date.parse('2025-01-01T00:00:00Z'),
        validUntil: null,
      }),
    ]);
    expect(result.ends).toEqual([]);
  });

  it('starts a price without valid_from now', () => {
    expect(plan([{ ...gp1, amount: '0.05' }]).inserts[0].validFrom).toBe(NOW);
  });

  it('changes nothing for an entry that restates a stored price', () => {
    expect(plan([{ ...gp1, amount: '0.0480', valid_from: '2026-01-01T00:00:00Z' }], [current])).toEqual({
      inserts: [],
      ends: [],
      availability: [],
      unchanged: 1,
    });
  });

  it('changes nothing for an entry without valid_from that restates the price in force', () => {
    expect(plan([{ ...gp1, amount: '0.0480' }], [current]).inserts).toEqual([]);
  });

  it('does not treat a different amount, unit count or window as a restatement', () => {
    expect(errors([{ ...gp1, amount: '0.048', valid_from: '2026-01-01T00:00:00Z' }], [current])[0]).toContain(
      'prices[0].valid_from: 2026-01-01T00:00:00Z is in the past',
    );
    expect(plan([{ ...gp1, amount: '0.0480', unit_count: 1 }], [current]).inserts).toHaveLength(1);
  });

  it('ends the open price at the valid_from of a scheduled change', () => {
    const result = plan([{ ...gp1, amount: '0.0400', valid_from: '2027-01-01T00:00:00Z' }], [current]);
    expect(result.inserts).toEqual([
      expect.objectContaining({ amount: '0.0400', validFrom: Date.parse('2027-01-01T00:00:00Z'), validUntil: null }),
    ]);
    expect(result.ends).toEqual([
      { id: 10, validUntil: Date.parse('2027-01-01T00:00:00Z'), supersededBy: 0, record: current },
    ]);
  });

  it('ends the open price now for a change without valid_from', () => {
    const result = plan([{ ...gp1, amount: '0.0400' }], [current]);
    expect(result.ends).toEqual([{ id: 10, validUntil: NOW, supersededBy: 0, record: current }]);
  });

  it('restates a price that a scheduled change ended, so a book applies twice without change', () => {
    const ended = priceRecord({
      id: 10,
      amount: '0.0480',
      validUntil: '2027-01-01T00:00:00Z',
      supersededBy: 11,
    });
    const next = priceRecord({ id: 11, amount: '0.0400', validFrom: '2027-01-01T00:00:00Z' });
    const again = plan(
      [
        { ...gp1, amount: '0.0480', valid_from: '2026-01-01T00:00:00Z' },
        { ...gp1, amount: '0.0400', valid_from: '2027-01-01T00:00:00Z' },
      ],
      [ended, next],
    );
    expect(again).toEqual({ inserts: [], ends: [], availability: [], unchanged: 2 });
  });

  it('chains entries of one key within a book, whatever their order in the file', () => {
    const result = plan([
      { ...gp1, amount: '2', valid_from: '2026-03-01T00:00:00Z' },
      { ...gp1, amount: '1', valid_from: '2026-01-01T00:00:00Z' },
    ]);
    expect(
      result.inserts.map((i) => [i.amount, i.validUntil && new Date(i.validUntil).toISOString(), i.supersededBy]),
    ).toEqual([
      ['1', '2026-03-01T00:00:00.000Z', 1],
      ['2', null, null],
    ]);
  });

  it('links prices of one book where one ends as the next starts, as a scheduled change (a restore)', () => {
    const result = plan([
      { ...gp1, amount: '1', valid_from: '2026-01-01T00:00:00Z', valid_until: '2027-01-01T00:00:00Z' },
      { ...gp1, amount: '2', valid_from: '2027-01-01T00:00:00Z' },
      { ...gp1, amount: '3', valid_from: '2028-01-01T00:00:00Z', valid_until: '2029-01-01T00:00:00Z' },
    ]);
    expect(result.inserts.map((i) => i.supersededBy)).toEqual([1, 2, null]);
  });

  it("marks the instants that are the write's own, not by their value: an entry without valid_from", () => {
    // A backfill open until the entry without valid_from, which ends it now; a scheduled price
    // whose explicit valid_from is the write's instant to the millisecond is still the book's.
    const result = plan([
      { ...gp1, amount: '1', valid_from: '2025-01-01T00:00:00Z' },
      { ...gp1, amount: '2' },
      { ...gp1, organization_id: 'org_1', amount: '3', valid_from: new Date(NOW).toISOString() },
    ]);
    expect(result.inserts.map((i) => [i.amount, i.validFrom, i.startsAtApply, i.validUntil, i.endsAtApply])).toEqual([
      ['1', Date.parse('2025-01-01T00:00:00Z'), false, NOW, true],
      ['2', NOW, true, null, false],
      ['3', NOW, false, null, false],
    ]);
    const explicit = plan([
      { ...gp1, amount: '1', valid_from: '2025-01-01T00:00:00Z' },
      { ...gp1, amount: '2', valid_from: '2027-01-01T00:00:00Z' },
    ]);
    expect(explicit.inserts.map((i) => [i.startsAtApply, i.endsAtApply])).toEqual([
      [false, false],
      [false, false],
    ]);
  });

  it('refuses a change to the past of a key that has records in that scope', () => {
    const message = errors([{ ...gp1, amount: '0.05', valid_from: '2026-05-01T00:00:00Z' }], [current]);
    expect(message).toEqual([expect.stringMatching(/^prices\[0\]\.valid_from: 2026-05-01T00:00:00Z is in the past/)]);
  });

  it('keeps scopes apart: an organization may be backfilled while the list has prices', () => {
    const result = plan(
      [{ ...gp1, organization_id: 'org_42', amount: '0.04', valid_from: '2026-01-01T00:00:00Z' }],
      [current],
    );
    expect(result.inserts).toEqual([expect.objectContaining({ organizationId: 'org_42' })]);
    expect(result.ends).toEqual([]);
  });

  it('refuses any other overlap, naming the entry and the price it overlaps', () => {
    const closed = priceRecord({
      id: 10,
      validFrom: '2026-01-01T00:00:00Z',
      validUntil: '2027-01-01T00:00:00Z',
    });
    expect(errors([{ ...gp1, amount: '1', valid_from: '2026-09-01T00:00:00Z' }], [closed])[0]).toMatch(
      /^prices\[0\]: overlaps the recorded price 0.0480 per 730 gib_hours from 2026-01-01T00:00:00Z until 2027-01-01T00:00:00Z of list price storage.gp1/,
    );
    const scheduled = priceRecord({ id: 12, validFrom: '2026-09-01T00:00:00Z' });
    expect(errors([{ ...gp1, amount: '1', valid_from: '2026-07-01T00:00:00Z' }], [scheduled])[0]).toContain(
      'prices[0]: overlaps',
    );
    expect(
      errors([
        { ...gp1, amount: '1', valid_from: '2026-07-01T00:00:00Z' },
        { ...gp1, amount: '2', valid_from: '2026-07-01T00:00:00Z' },
      ])[0],
    ).toContain('prices[1]: overlaps the price 1 per 730 gib_hours from 2026-07-01T00:00:00Z');
  });

  describe('ends of their own: an entry that restates a stored price with a valid_until', () => {
    const end = '2027-01-01T00:00:00Z';

    it('sets the end of the price in force, with no record added and its valid_from kept', () => {
      const result = plan(
        [{ ...gp1, amount: '0.0480', valid_from: '2026-01-01T00:00:00Z', valid_until: end }],
        [current],
      );
      expect(result).toEqual({
        inserts: [],
        ends: [{ id: current.id, validUntil: Date.parse(end), supersededBy: null, record: current }],
        availability: [],
        unchanged: 0,
      });
    });

    it('finds the price in force for an entry without valid_from, as a restatement does', () => {
      expect(plan([{ ...gp1, amount: '0.0480', valid_until: end }], [current]).ends).toEqual([
        expect.objectContaining({ id: current.id, validUntil: Date.parse(end), supersededBy: null }),
      ]);
    });

    it('ends a scheduled open price too', () => {
      const scheduled = priceRecord({ id: 11, amount: '0.0500', validFrom: '2026-09-01T00:00:00Z' });
      expect(
        plan([{ ...gp1, amount: '0.0500', valid_from: '2026-09-01T00:00:00Z', valid_until: end }], [scheduled]).ends,
      ).toEqual([expect.objectContaining({ id: 11, validUntil: Date.parse(end), supersededBy: null })]);
    });

    it('takes an end at the write’s instant, not before it', () => {
      expect(plan([{ ...gp1, amount: '0.0480', valid_until: '2026-06-01T12:00:00Z' }], [current]).ends).toHaveLength(1);
      expect(
        errors(
          [{ ...gp1, amount: '0.0480', valid_from: '2026-01-01T00:00:00Z', valid_until: '2026-03-01T00:00:00Z' }],
          [current],
        ),
      ).toEqual([
        'prices[0].valid_until: 2026-03-01T00:00:00Z is before this write takes effect (2026-06-01T12:00:00Z); an end is set to then or later',
      ]);
    });

    it('says how to move an end that is set already, and that a past one cannot move', () => {
      const ending = priceRecord({ id: 12, amount: '0.0480', validUntil: '2026-12-01T00:00:00Z' });
      expect(
        errors([{ ...gp1, amount: '0.0480', valid_from: '2026-01-01T00:00:00Z', valid_until: end }], [ending]),
      ).toEqual([
        'prices[0].valid_until: the recorded price 0.0480 per 730 gib_hours from 2026-01-01T00:00:00Z ends at ' +
          '2026-12-01T00:00:00Z already; an end is moved by withdrawing it first (withdraw --valid-until ' +
          '2026-12-01T00:00:00Z), then setting the new one',
      ]);
      const ended = priceRecord({ id: 13, amount: '0.0480', validUntil: '2026-03-01T00:00:00Z' });
      expect(
        errors([{ ...gp1, amount: '0.0480', valid_from: '2026-01-01T00:00:00Z', valid_until: end }], [ended])[0],
      ).toContain('ended at 2026-03-01T00:00:00Z; an end that took effect cannot move');
    });

    it('is a new price when the terms differ, as before: another amount is a change, not an end', () => {
      const result = plan([{ ...gp1, amount: '0.0500', valid_until: end }], [current]);
      expect(result.inserts).toHaveLength(1);
      expect(result.ends).toEqual([expect.objectContaining({ id: current.id, validUntil: NOW, supersededBy: 0 })]);
    });

    it('restates an end that is set: applying the book again changes nothing', () => {
      const ending = priceRecord({ id: 14, amount: '0.0480', validUntil: end });
      expect(
        plan([{ ...gp1, amount: '0.0480', valid_from: '2026-01-01T00:00:00Z', valid_until: end }], [ending]),
      ).toMatchObject({
        ends: [],
        unchanged: 1,
      });
    });
  });

  it('refuses an entry without valid_from whose end is not after now', () => {
    expect(errors([{ ...gp1, amount: '1', valid_until: '2026-06-01T00:00:00Z' }])[0]).toContain(
      'prices[0].valid_until: 2026-06-01T00:00:00Z must be after valid_from',
    );
  });

  it('returns every refusal, in entry order, and no plan', () => {
    const planned = planImport(
      book([
        { ...gp1, amount: '1', valid_from: '2026-05-01T00:00:00Z' },
        { ...gp1, product_key: 'storage.io1', amount: '1' },
        { ...gp1, amount: '2', valid_from: '2026-04-01T00:00:00Z' },
      ]),
      [current],
      new Map(),
      NOW,
    );
    expect('errors' in planned && planned.errors.map((e) => e.split(':')[0])).toEqual([
      'prices[0].valid_from',
      'prices[2].valid_from',
    ]);
  });

  it('refuses a key of products that is no product: no price, recorded or in the book, and no availability', () => {
    const products = [
      { product_key: 'compute.zz.9', on_sale: false }, // a typo of nothing
      { product_key: 'storage.gp1', on_sale: false }, // recorded
      { product_key: 'compute.g2.4', on_sale: false }, // priced by this book
      { product_key: 'storage.io1', on_sale: true }, // has an availability
    ];
    const planned = planImport(
      book([{ product_key: 'compute.g2.4', unit_type: 'seconds', unit_count: 3600, amount: '1' }], products),
      [],
      new Map([['storage.io1', false]]),
      NOW,
      undefined,
      new Set(['storage.gp1']),
    );
    expect(planned).toEqual({
      errors: [
        'products[0].product_key: "compute.zz.9" is no product: it has no price, recorded or in this book, and no ' +
          'availability (a typo? availability is set for a priced product)',
      ],
    });
  });

  it('changes availability only where it differs (no row means on sale)', () => {
    const planned = planImport(
      book(
        [],
        [
          { product_key: 'storage.io1', on_sale: false },
          { product_key: 'storage.gp1', on_sale: true },
          { product_key: 'storage.st1', on_sale: true },
        ],
      ),
      [],
      new Map([
        ['storage.io1', false],
        ['storage.st1', false],
      ]),
      NOW,
    );
    expect('plan' in planned && planned.plan.availability).toEqual([
      { index: 2, productKey: 'storage.st1', onSale: true },
    ]);
  });

  it('counts the entries that restate what is recorded, prices and products', () => {
    const planned = planImport(
      book(
        [
          { ...gp1, amount: '0.0480', valid_from: '2026-01-01T00:00:00Z' },
          { ...gp1, amount: '0.0480', valid_from: '2026-01-01T00:00:00Z' },
          { ...gp1, product_key: 'storage.io1', amount: '0.1', valid_from: '2026-01-01T00:00:00Z' },
        ],
        [
          { product_key: 'storage.io1', on_sale: false },
          { product_key: 'storage.st1', on_sale: true },
        ],
      ),
      [current],
      new Map([
        ['storage.io1', false],
        ['storage.st1', false],
      ]),
      NOW,
    );
    const counts = 'plan' in planned && planned.plan;
    expect(counts && [counts.unchanged, counts.inserts.length, counts.availability.length]).toEqual([3, 1, 1]);
  });

  it('finds the stored price to restate, end or refuse among many of one key (bisection)', () => {
    // Twelve closed months of 2025, then an open price from 2026-01-01; now is 2026-06-01.
    const months = Array.from({ length: 12 }, (_, m) =>
      priceRecord({
        id: 100 + m,
        amount: `0.0${m + 10}`,
        validFrom: Date.UTC(2025, m, 1),
        validUntil: Date.UTC(2025, m + 1, 1),
      }),
    );
    const stored = [...months.reverse(), current]; // read in any order
    expect(
      plan(
        [{ ...gp1, amount: '0.014', valid_from: '2025-05-01T00:00:00Z', valid_until: '2025-06-01T00:00:00Z' }],
        stored,
      ),
    ).toMatchObject({
      inserts: [],
      unchanged: 1,
    });
    expect(plan([{ ...gp1, amount: '0.0480' }], stored)).toMatchObject({ inserts: [], unchanged: 1 });
    expect(plan([{ ...gp1, amount: '0.05', valid_from: '2026-08-01T00:00:00Z' }], stored).ends).toEqual([
      expect.objectContaining({ id: 10, validUntil: Date.parse('2026-08-01T00:00:00Z') }),
    ]);
  });

  it('names at most three overlapped prices and counts the others', () => {
    const scheduled = Array.from({ length: 5 }, (_, i) =>
      priceRecord({
        validFrom: Date.UTC(2027, i, 1),
        validUntil: Date.UTC(2027, i + 1, 1),
      }),
    );
    const [message] = errors(
      [{ ...gp1, amount: '1', valid_from: '2026-12-01T00:00:00Z', valid_until: '2028-01-01T00:00:00Z' }],
      scheduled,
    );
    expect(message.match(/the recorded price/g)).toHaveLength(3);
    expect(message).toContain(
      'from 2027-03-01T00:00:00Z until 2027-04-01T00:00:00Z and 2 more of list price storage.gp1',
    );
  });

  const DAY = 86_400_000;
  const START = Date.parse('2027-01-01T00:00:00Z');
  /** `count` scheduled changes of one key, a day apart from START, listed latest first. */
  const changesOfOneKey = (count: number): object[] =>
    Array.from({ length: count }, (_, i) => ({
      ...gp1,
      amount: String(i + 1),
      valid_from: new Date(START + (count - 1 - i) * DAY).toISOString(),
    }));

  it('plans 100,000 changes of one key, reporting progress', () => {
    const prices = changesOfOneKey(100_000);
    const reported: number[] = [];
    const planned = planImport(book(prices), [current], new Map(), NOW, (done) => reported.push(done));
    if (!('plan' in planned)) throw new Error(planned.errors.slice(0, 3).join('\n'));
    expect(planned.plan.inserts).toHaveLength(100_000);
    expect(planned.plan.ends).toEqual([expect.objectContaining({ id: 10, validUntil: START })]);
    expect(planned.plan.inserts.filter((p) => p.validUntil === null)).toHaveLength(1);
    expect(reported[0]).toBe(0);
    expect(reported[reported.length - 1]).toBe(100_000);
  });

  it('plans in O(n log n): eight times the changes of one key take about eight times as long', () => {
    // Quadratic planning (every entry against every price of its key) takes 64 times as long (a
    // quadratic variant measured 74×), and minutes on the 100,000 above; this planning measures
    // 11-13× (its sort: 8 × 14 / 11 ≈ 10). A ratio of two sizes' best times, not a bound on wall
    // time, which a busy machine breaks (docs/tests.md).
    expectLinearTime(
      (prices: PriceBook) => planImport(prices, [current], new Map(), NOW),
      (count: number) => book(changesOfOneKey(count)),
      30,
    );
  });
});
