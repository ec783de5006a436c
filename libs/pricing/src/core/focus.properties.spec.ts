import fc from 'fast-check';
import type { PriceRecord } from './price-record';
import { priceRecord } from './price-record.fixture';
import { focusRows, type FocusBilling } from './focus';
import { Exact } from './quote';
import { costOfUsage, sumCosts, type ApplicablePrices } from './usage';

// FOCUS's identities on any prices and any usage (docs/using-pricing.md, "FOCUS cost rows"):
// UnitPrice × PricingQuantity = Cost exactly where the quantity in pricing units and the product
// have at most 20 decimal places, else within (UnitPrice + PricingQuantity + 2) halves of 10^-20;
// the rows and the unpriced parts tile the usage; the rows cost what costOfUsage says.

const START = Date.parse('2026-01-01T00:00:00Z');
const DAY = 86_400_000;
const YEAR: FocusBilling = {
  providerName: 'Example Cloud',
  billingAccountId: 'org_1',
  billingPeriodStart: new Date(START),
  billingPeriodEnd: new Date(START + 365 * DAY),
};

const amount = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.nat({ max: 24 }))
  .map(([digits, scale]) => new Exact(digits.toString()).dividedBy(new Exact(10).pow(scale)).toFixed());
const unitCount = fc.oneof(fc.constantFrom(1, 730, 3600, 1000), fc.integer({ min: 1, max: 100_000 }));
/** An instant of the year, to the second (boundaries of whole seconds: the written periods tile). */
const second = fc.integer({ min: 0, max: 364 * 86_400 }).map((s) => START + s * 1000);

/** Records of one scope, back to back or with gaps, each with its own amount and unit count. */
function scope(organizationId: string | null, unitType: 'seconds' | 'gib_hours'): fc.Arbitrary<PriceRecord[]> {
  return fc.array(fc.tuple(second, amount, unitCount, fc.boolean()), { maxLength: 4 }).map((specs) => {
    const starts = [...new Set(specs.map(([at]) => at))].sort((a, b) => a - b);
    return starts.map((from, i) => {
      const [, price, count, gapAfter] = specs.find(([at]) => at === from)!;
      const next = starts[i + 1];
      const half = next === undefined ? 0 : Math.floor((from + (next - from) / 2) / 1000) * 1000;
      const until = next === undefined ? null : gapAfter && half > from ? half : next;
      return priceRecord({
        productKey: unitType === 'seconds' ? 'compute.g2.4' : 'storage.gp1',
        organizationId,
        unitType,
        unitCount: count,
        amount: price,
        validFrom: from,
        validUntil: until,
      });
    });
  });
}

const usageCase = fc.constantFrom('seconds' as const, 'gib_hours' as const).chain((unitType) =>
  fc.record({
    unitType: fc.constant(unitType),
    prices: fc
      .tuple(scope(null, unitType), scope('org_1', unitType))
      .map(([list, organization]): ApplicablePrices => ({ list, organization })),
    interval: fc.tuple(second, second).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const),
    sizeGib: amount,
  }),
);

/** The exact quantity of the usage `[from, to)` in the family's unit. */
function exactQuantity(unitType: 'seconds' | 'gib_hours', ms: number, sizeGib: string) {
  return unitType === 'seconds' ? new Exact(ms).dividedBy(1000) : new Exact(sizeGib).times(ms).dividedBy(3_600_000);
}
const decimals = (value: InstanceType<typeof Exact>) => Math.max(0, value.decimalPlaces());

describe('focusRows on any prices and usage', () => {
  it('keeps UnitPrice × PricingQuantity = Cost: exactly where the quantity is exact, else to the stated precision', () => {
    fc.assert(
      fc.property(usageCase, ({ unitType, prices, interval: [from, to], sizeGib }) => {
        const usage = { from: new Date(from), to: new Date(to), ...(unitType === 'gib_hours' ? { sizeGib } : {}) };
        const { rows } = focusRows(unitType === 'seconds' ? 'compute.g2.4' : 'storage.gp1', prices, usage, YEAR);
        for (const row of rows) {
          const ms = Date.parse(row.ChargePeriodEnd!) - Date.parse(row.ChargePeriodStart!);
          const unit = Number(/^(\d+) /.exec(row.PricingUnit!)?.[1] ?? 1);
          const quantity = new Exact(row.PricingQuantity!);
          const quantityExact = quantity.times(unit).eq(exactQuantity(unitType, ms, sizeGib));
          // A list price per another unit than the row's is itself rounded: exactness is claimed where units agree.
          const listRecord = prices.list.find((record) => String(record.id) === row.x_ListPriceRecordId);
          for (const [price, cost, unitsAgree] of [
            [row.ListUnitPrice!, row.ListCost!, listRecord === undefined || listRecord.unitCount === unit],
            [row.ContractedUnitPrice!, row.ContractedCost!, true],
          ] as const) {
            const product = new Exact(price).times(quantity);
            const gap = product.minus(cost).abs();
            expect(gap.lte(new Exact(price).plus(quantity).plus(2).times('0.5e-20'))).toBe(true);
            if (quantityExact && decimals(product) <= 20 && unitsAgree) expect(gap.isZero()).toBe(true);
          }
        }
      }),
    );
  });

  it('tiles the usage with its rows and unpriced parts, and costs what costOfUsage says, to the 20th place per row', () => {
    fc.assert(
      fc.property(usageCase, ({ unitType, prices, interval: [from, to], sizeGib }) => {
        const usage = { from: new Date(from), to: new Date(to), ...(unitType === 'gib_hours' ? { sizeGib } : {}) };
        const cost = focusRows(unitType === 'seconds' ? 'compute.g2.4' : 'storage.gp1', prices, usage, YEAR);
        const windows = [
          ...cost.rows.map((row) => [Date.parse(row.ChargePeriodStart!), Date.parse(row.ChargePeriodEnd!)]),
          ...cost.unpriced.map((part) => [part.from.getTime(), part.to.getTime()]),
        ].sort(([a], [b]) => a - b);
        let at = from;
        for (const [start, end] of windows) {
          expect([start, end > start]).toEqual([at, true]);
          at = end;
        }
        expect(at).toBe(to);
        const priced = costOfUsage(prices, unitType, usage);
        expect(cost.complete).toBe(priced.complete);
        const billed = new Exact(sumCosts(cost.rows.map((row) => row.BilledCost!)));
        expect(billed.minus(priced.total).abs().lte(new Exact(cost.rows.length).times('1e-20'))).toBe(true);
        // One SkuPriceId per pricing unit, whatever the amount, window or scope.
        for (const row of cost.rows) {
          expect(row.SkuPriceId).toBe(`${row.SkuId}:${/^(\d+) /.exec(row.PricingUnit!)?.[1] ?? 1}:${unitType}`);
        }
      }),
    );
  });
});
