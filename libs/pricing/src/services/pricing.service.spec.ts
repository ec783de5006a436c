import type { UnitType } from '../catalogue/catalogue';
import { ManualClock } from '@app/clock';
import {
  PricingError,
  PricingErrorCode,
  PricingUnavailableError,
  ProductUnavailableError,
  UnknownProductError,
} from '../errors/pricing-error';
import type { PriceRecord } from '../core/price-record';
import { priceRecord } from '../core/price-record.fixture';
import { resolvePricingOptions } from '../options/pricing-options';
import { PricingService } from './pricing.service';
import type { QuoteLookup } from './pricing.types';
import type { PriceBookLoader } from '../snapshot/price-book-loader';
import { PricingSnapshot } from '../snapshot/pricing-snapshot';
import { PricingState } from '../snapshot/pricing-state';

/** Stands in for PriceBookLoader: holds one snapshot, confirmed now, replaceable as an import would. */
class HeldSnapshot {
  reads = 0;
  readonly databaseReachable = true;

  constructor(private held: PricingSnapshot | undefined) {}

  get snapshot(): PricingSnapshot | undefined {
    this.reads += 1;
    return this.held;
  }

  confirmedAgoMs(): number {
    return this.held ? 0 : Infinity;
  }

  replace(snapshot: PricingSnapshot | undefined): void {
    this.held = snapshot;
  }

  check(): Promise<void> {
    return Promise.resolve();
  }

  loaded(): Promise<void> {
    return this.held ? Promise.resolve() : new Promise(() => undefined);
  }
}

const RECORDED = new Date('2025-12-01T00:00:00Z');

interface RecordSpec {
  readonly key: string;
  readonly org?: string;
  readonly unit: UnitType;
  readonly count: number;
  readonly amount: string;
  readonly from: string;
  readonly until?: string;
}

/** The fixture's price record, from the short spec these tests write. */
function record(spec: RecordSpec): PriceRecord {
  return priceRecord({
    productKey: spec.key,
    organizationId: spec.org ?? null,
    unitType: spec.unit,
    unitCount: spec.count,
    amount: spec.amount,
    validFrom: spec.from,
    validUntil: spec.until ?? null,
  });
}

function snapshotOf(
  records: readonly PriceRecord[],
  availability: Record<string, boolean> = {},
): Promise<PricingSnapshot> {
  return PricingSnapshot.build(
    {
      records,
      availability: new Map(Object.entries(availability)),
      // Each list price was set at RECORDED.
      listWrites: records.filter((r) => r.organizationId === null).map(() => RECORDED.getTime()),
      listLog: [],
      version: '1',
      lastChangeId: '0',
    },
    Date.parse(NOW),
  );
}

const NOW = '2026-06-15T12:00:00.000Z';

async function serviceOf(
  records: readonly PriceRecord[],
  availability: Record<string, boolean> = {},
  now: string = NOW,
): Promise<{ service: PricingService; cache: HeldSnapshot; clock: ManualClock }> {
  const cache = new HeldSnapshot(await snapshotOf(records, availability));
  const clock = new ManualClock(new Date(now));
  const loader = cache as unknown as PriceBookLoader;
  const state = new PricingState(resolvePricingOptions({}), loader, clock);
  return { service: new PricingService(state, loader, clock), cache, clock };
}

/** The cost of a quote, `undefined` when no price was found. */
function costOf(quote: QuoteLookup): string | undefined {
  return quote.found ? quote.cost : undefined;
}

/** Runs `fn` and returns what it threw (fails the test when it throws nothing). */
function thrownBy(fn: () => unknown): PricingError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(PricingError);
    return error as PricingError;
  }
  throw new Error('expected an error, nothing was thrown');
}

// The sample-like book: gp1 on sale; st1 and io1 priced but marked not on sale (as the migration does).
const gp1 = record({
  key: 'storage.gp1',
  unit: 'gib_hours',
  count: 730,
  amount: '0.0480',
  from: '2026-01-01T00:00:00Z',
});
const st1 = record({
  key: 'storage.st1',
  unit: 'gib_hours',
  count: 730,
  amount: '0.0250',
  from: '2026-01-01T00:00:00Z',
});
const io1 = record({
  key: 'storage.io1',
  unit: 'gib_hours',
  count: 730,
  amount: '0.1250',
  from: '2026-01-01T00:00:00Z',
});
const NOT_ON_SALE = { 'storage.io1': false, 'storage.st1': false };

describe('PricingService.assertOrderable', () => {
  it('accepts a product that is on sale and has a current list price', async () => {
    const { service } = await serviceOf([gp1, st1, io1], NOT_ON_SALE);
    expect(() => service.assertOrderable('storage.gp1')).not.toThrow();
  });

  it('accepts a product explicitly marked on sale', async () => {
    const { service } = await serviceOf([gp1], { 'storage.gp1': true });
    expect(() => service.assertOrderable('storage.gp1')).not.toThrow();
  });

  it.each(['storage.io1', 'storage.st1'])(
    'refuses %s, priced but not on sale, with PRODUCT_UNAVAILABLE',
    async (key) => {
      const { service } = await serviceOf([gp1, st1, io1], NOT_ON_SALE);
      const error = thrownBy(() => service.assertOrderable(key));
      expect(error).toBeInstanceOf(ProductUnavailableError);
      expect(error.code).toBe(PricingErrorCode.ProductUnavailable);
      expect(error.code).toBe('PRODUCT_UNAVAILABLE');
      expect(error.details).toEqual({ product_key: key });
      expect((error as ProductUnavailableError).productKey).toBe(key);
      expect(error.message).toBe(`${key} cannot be ordered: it is not on sale`);
    },
  );

  it('refuses a product that was priced earlier but has no price now', async () => {
    const ended = record({
      key: 'storage.gp1',
      unit: 'gib_hours',
      count: 730,
      amount: '0.0480',
      from: '2026-01-01T00:00:00Z',
      until: '2026-06-01T00:00:00Z',
    });
    const { service } = await serviceOf([ended]);
    const error = thrownBy(() => service.assertOrderable('storage.gp1'));
    expect(error).toBeInstanceOf(ProductUnavailableError);
    expect(error.code).toBe('PRODUCT_UNAVAILABLE');
    expect(error.details).toEqual({ product_key: 'storage.gp1' });
    expect(error.message).toBe('storage.gp1 cannot be ordered: it has no current price');
    // Still orderable at an instant inside its window.
    expect(() => service.assertOrderable('storage.gp1', new Date('2026-05-31T23:59:59.999Z'))).not.toThrow();
  });

  it('refuses a product whose only price is scheduled, until that price takes effect', async () => {
    const scheduled = record({
      key: 'storage.gp1',
      unit: 'gib_hours',
      count: 730,
      amount: '0.05',
      from: '2026-07-01T00:00:00Z',
    });
    const { service, clock } = await serviceOf([scheduled]);
    expect(thrownBy(() => service.assertOrderable('storage.gp1')).code).toBe('PRODUCT_UNAVAILABLE');
    clock.set('2026-06-30T23:59:59.999Z');
    expect(thrownBy(() => service.assertOrderable('storage.gp1')).code).toBe('PRODUCT_UNAVAILABLE');
    clock.set('2026-07-01T00:00:00.000Z');
    expect(() => service.assertOrderable('storage.gp1')).not.toThrow();
  });

  it('refuses a product priced only for an organization with PRODUCT_UNAVAILABLE (no list price)', async () => {
    const orgOnly = record({
      key: 'storage.snapshot',
      org: 'org_42',
      unit: 'gib_hours',
      count: 730,
      amount: '0.01',
      from: '2026-01-01T00:00:00Z',
    });
    const { service } = await serviceOf([gp1, orgOnly]);
    const error = thrownBy(() => service.assertOrderable('storage.snapshot'));
    expect(error).toBeInstanceOf(ProductUnavailableError);
    expect(error.details).toEqual({ product_key: 'storage.snapshot' });
  });

  it.each(['storage.snapshot', 'compute.g2.4'])(
    'refuses a well-formed key that was never priced (%s) with PRODUCT_UNAVAILABLE, not UNKNOWN_PRODUCT',
    async (key) => {
      const { service } = await serviceOf([gp1, st1, io1], NOT_ON_SALE);
      const error = thrownBy(() => service.assertOrderable(key));
      expect(error).toBeInstanceOf(ProductUnavailableError);
      expect(error.details).toEqual({ product_key: key });
    },
  );

  it('refuses a product marked on sale that was never priced with PRODUCT_UNAVAILABLE', async () => {
    const { service } = await serviceOf([gp1], { 'storage.snapshot': true });
    const error = thrownBy(() => service.assertOrderable('storage.snapshot'));
    expect(error.code).toBe('PRODUCT_UNAVAILABLE');
    expect(error.details).toEqual({ product_key: 'storage.snapshot' });
  });

  it.each([
    ['an unknown storage class', 'storage.gp2'],
    ['an upper-case key', 'storage.GP1'],
    ['a key of no family', 'volume.gp1'],
    ['an empty key', ''],
    ['a key longer than 64 characters', `compute.g2.${'1'.repeat(60)}`],
  ])('refuses %s with UNKNOWN_PRODUCT', async (_label, key) => {
    const { service } = await serviceOf([gp1, st1, io1], NOT_ON_SALE);
    const error = thrownBy(() => service.assertOrderable(key));
    expect(error).toBeInstanceOf(UnknownProductError);
    expect(error.code).toBe('UNKNOWN_PRODUCT');
    expect(error.details).toEqual({ product_key: key });
  });

  it('refuses with PRICING_UNAVAILABLE when no snapshot can be served', async () => {
    const { service, cache } = await serviceOf([gp1]);
    cache.replace(undefined);
    const error = thrownBy(() => service.assertOrderable('storage.gp1'));
    expect(error).toBeInstanceOf(PricingUnavailableError);
    expect(error.code).toBe('PRICING_UNAVAILABLE');
  });

  it('follows the snapshot it is given: availability changes apply on the next call, without a new service', async () => {
    const { service, cache } = await serviceOf([gp1, st1, io1], NOT_ON_SALE);
    expect(() => service.assertOrderable('storage.gp1')).not.toThrow();
    cache.replace(await snapshotOf([gp1, st1, io1], { ...NOT_ON_SALE, 'storage.gp1': false }));
    expect(thrownBy(() => service.assertOrderable('storage.gp1')).code).toBe('PRODUCT_UNAVAILABLE');
    cache.replace(
      await snapshotOf([gp1, st1, io1], { 'storage.gp1': true, 'storage.io1': true, 'storage.st1': false }),
    );
    expect(() => service.assertOrderable('storage.gp1')).not.toThrow();
    expect(() => service.assertOrderable('storage.io1')).not.toThrow();
    expect(thrownBy(() => service.assertOrderable('storage.st1')).code).toBe('PRODUCT_UNAVAILABLE');
  });
});

describe('PricingService.priceAt', () => {
  const listA = record({
    key: 'storage.gp1',
    unit: 'gib_hours',
    count: 730,
    amount: '0.0480',
    from: '2026-01-01T00:00:00Z',
    until: '2026-07-01T00:00:00Z',
  });
  const listB = record({
    key: 'storage.gp1',
    unit: 'gib_hours',
    count: 730,
    amount: '0.0520',
    from: '2026-07-01T00:00:00Z',
  });
  const org42 = record({
    key: 'storage.gp1',
    org: 'org_42',
    unit: 'gib_hours',
    count: 730,
    amount: '0.0400',
    from: '2026-03-01T00:00:00Z',
    until: '2026-09-01T00:00:00Z',
  });
  const org7 = record({
    key: 'storage.gp1',
    org: 'org_7',
    unit: 'gib_hours',
    count: 730,
    amount: '0.0300',
    from: '2026-01-01T00:00:00Z',
  });
  const records = [listA, listB, org42, org7];

  it("returns the organization's agreed price in force over the list price", async () => {
    const { service } = await serviceOf(records);
    expect(service.priceAt('storage.gp1', { organizationId: 'org_42' })).toEqual({
      found: true,
      price: {
        productKey: 'storage.gp1',
        scope: 'organization',
        organizationId: 'org_42',
        unitType: 'gib_hours',
        unitCount: 730,
        amount: '0.0400',
        validFrom: new Date('2026-03-01T00:00:00Z'),
        validUntil: new Date('2026-09-01T00:00:00Z'),
      },
    });
  });

  it('returns the list price without an organization', async () => {
    const { service } = await serviceOf(records);
    expect(service.priceAt('storage.gp1')).toEqual({
      found: true,
      price: {
        productKey: 'storage.gp1',
        scope: 'list',
        organizationId: null,
        unitType: 'gib_hours',
        unitCount: 730,
        amount: '0.0480',
        validFrom: new Date('2026-01-01T00:00:00Z'),
        validUntil: new Date('2026-07-01T00:00:00Z'),
      },
    });
  });

  it('returns the list price for an organization without an agreed price (another organization’s is ignored)', async () => {
    const { service } = await serviceOf(records);
    const lookup = service.priceAt('storage.gp1', { organizationId: 'org_99' });
    expect(lookup).toMatchObject({ found: true, price: { scope: 'list', organizationId: null, amount: '0.0480' } });
    // org_7's price is lower but belongs to org_7 only.
    expect(service.priceAt('storage.gp1', { organizationId: 'org_7' })).toMatchObject({
      found: true,
      price: { scope: 'organization', organizationId: 'org_7', amount: '0.0300' },
    });
  });

  it('falls back to the list price outside the organization price window (valid_from inclusive, valid_until exclusive)', async () => {
    const { service } = await serviceOf(records);
    const amountAt = (at: string): string | undefined => {
      const lookup = service.priceAt('storage.gp1', { organizationId: 'org_42', at: new Date(at) });
      return lookup.found ? `${lookup.price.scope}:${lookup.price.amount}` : undefined;
    };
    expect(amountAt('2026-02-28T23:59:59.999Z')).toBe('list:0.0480');
    expect(amountAt('2026-03-01T00:00:00.000Z')).toBe('organization:0.0400');
    expect(amountAt('2026-08-31T23:59:59.999Z')).toBe('organization:0.0400');
    expect(amountAt('2026-09-01T00:00:00.000Z')).toBe('list:0.0520');
  });

  it('switches list prices at the boundary: valid_from inclusive, valid_until exclusive', async () => {
    const { service } = await serviceOf(records);
    const at = (instant: string) => service.priceAt('storage.gp1', { at: new Date(instant) });
    expect(at('2025-12-31T23:59:59.999Z')).toEqual({ found: false });
    expect(at('2026-01-01T00:00:00.000Z')).toMatchObject({ found: true, price: { amount: '0.0480' } });
    expect(at('2026-06-30T23:59:59.999Z')).toMatchObject({ found: true, price: { amount: '0.0480' } });
    expect(at('2026-07-01T00:00:00.000Z')).toMatchObject({
      found: true,
      price: { amount: '0.0520', validFrom: new Date('2026-07-01T00:00:00Z'), validUntil: null },
    });
    expect(at('2100-01-01T00:00:00.000Z')).toMatchObject({ found: true, price: { amount: '0.0520' } });
  });

  it('defaults the instant to the clock', async () => {
    const { service, clock } = await serviceOf(records);
    expect(service.priceAt('storage.gp1')).toMatchObject({ found: true, price: { amount: '0.0480' } });
    clock.set('2026-07-01T00:00:00.000Z');
    expect(service.priceAt('storage.gp1')).toMatchObject({ found: true, price: { amount: '0.0520' } });
  });

  it('answers "no price" explicitly, never zero', async () => {
    const ended = record({
      key: 'network.vpc_egress',
      unit: 'gb',
      count: 1,
      amount: '0.01',
      from: '2026-01-01T00:00:00Z',
      until: '2026-02-01T00:00:00Z',
    });
    const { service } = await serviceOf([...records, ended]);
    expect(service.priceAt('storage.snapshot')).toEqual({ found: false });
    expect(service.priceAt('storage.snapshot', { organizationId: 'org_42' })).toEqual({ found: false });
    expect(service.priceAt('not a key')).toEqual({ found: false });
    expect(service.priceAt('network.vpc_egress')).toEqual({ found: false });
  });

  it('returns the organization price even when there is no list price', async () => {
    const orgOnly = record({
      key: 'compute.g2.4',
      org: 'org_42',
      unit: 'seconds',
      count: 3600,
      amount: '0.05',
      from: '2026-01-01T00:00:00Z',
    });
    const { service } = await serviceOf([orgOnly]);
    expect(service.priceAt('compute.g2.4', { organizationId: 'org_42' })).toMatchObject({
      found: true,
      price: { scope: 'organization', amount: '0.05' },
    });
    expect(service.priceAt('compute.g2.4')).toEqual({ found: false });
    expect(service.priceAt('compute.g2.4', { organizationId: 'org_7' })).toEqual({ found: false });
  });

  it('prices products that are not on sale (availability does not hide a price)', async () => {
    const { service } = await serviceOf([gp1, st1, io1], NOT_ON_SALE);
    expect(service.priceAt('storage.io1')).toMatchObject({ found: true, price: { amount: '0.1250', scope: 'list' } });
  });

  it('throws PRICING_UNAVAILABLE when no snapshot can be served', async () => {
    const { service, cache } = await serviceOf(records);
    cache.replace(undefined);
    expect(thrownBy(() => service.priceAt('storage.gp1')).code).toBe('PRICING_UNAVAILABLE');
  });

  it('reads the snapshot held in memory: a new one applies on the next call', async () => {
    const { service, cache } = await serviceOf(records);
    const before = cache.reads;
    service.priceAt('storage.gp1');
    expect(cache.reads).toBe(before + 1);
    const changed = record({
      key: 'storage.gp1',
      unit: 'gib_hours',
      count: 730,
      amount: '0.0490',
      from: '2026-01-01T00:00:00Z',
    });
    cache.replace(await snapshotOf([changed]));
    expect(service.priceAt('storage.gp1')).toMatchObject({ found: true, price: { amount: '0.0490' } });
  });
});

describe('PricingService.quote', () => {
  const from = '2026-01-01T00:00:00Z';

  it.each<[UnitType, string, number, string, string, string]>([
    ['seconds', 'compute.g2.4', 3600, '0.0610', '7200', '0.122'],
    ['seconds', 'network.floating_ip', 3600, '0.0050', '1', '0.00000138888888888889'],
    ['gib_hours', 'storage.gp1', 730, '0.0480', '730', '0.048'],
    ['gib_hours', 'storage.snapshot', 730, '0.0100', '73', '0.001'],
    ['gb', 'network.vpc_egress', 1, '0.01', '1234.5', '12.345'],
    ['metric_months', 'observability.custom_metric', 1, '0.10', '3', '0.3'],
    ['requests', 'observability.api_request', 1000000, '0.50', '2500000', '1.25'],
    ['samples', 'observability.ingested_sample', 1000000, '0.20', '123', '0.0000246'],
  ])('prices %s (%s, %i units for %s × %s)', async (unit, key, count, amount, quantity, cost) => {
    const { service } = await serviceOf([record({ key, unit, count, amount, from })]);
    const quote = service.quote(key, quantity);
    expect(quote).toEqual({
      found: true,
      price: {
        productKey: key,
        scope: 'list',
        organizationId: null,
        unitType: unit,
        unitCount: count,
        amount,
        validFrom: new Date(from),
        validUntil: null,
      },
      quantity,
      cost,
    });
    expect(typeof costOf(quote)).toBe('string');
  });

  it('"0.0480" per 730 GiB-hours for 730 GiB-hours costs "0.048"', async () => {
    const { service } = await serviceOf([gp1]);
    expect(costOf(service.quote('storage.gp1', '730'))).toBe('0.048');
    expect(costOf(service.quote('storage.gp1', 730n))).toBe('0.048');
    expect(costOf(service.quote('storage.gp1', '1000000'))).toBe('65.75342465753424657534');
  });

  /** The cost of `quantity` GB of egress at `amount` per `count` GB, quoted through the service. */
  const egressCost = async (amount: string, quantity: string | bigint, count = 1): Promise<string | undefined> =>
    costOf(
      (await serviceOf([record({ key: 'network.vpc_egress', unit: 'gb', count, amount, from })])).service.quote(
        'network.vpc_egress',
        quantity,
      ),
    );

  it.each([
    ['0.1', '3', 1, '0.3'], // 0.1 * 3 === 0.30000000000000004 in floats
    ['0.07', '100', 1, '7'], // 0.07 * 100 === 7.000000000000001
    ['0.1', '0.2', 1, '0.02'], // 0.1 * 0.2 === 0.020000000000000004
    ['1.1', '1.1', 1, '1.21'], // 1.1 * 1.1 === 1.2100000000000002
    ['0.3', '1', 3, '0.1'], // 0.3 / 3 === 0.09999999999999999
  ])('computes %s × %s / %i exactly as %s, where floats would round', async (amount, quantity, count, cost) => {
    expect(await egressCost(amount, quantity, count)).toBe(cost);
  });

  // Amount, quantity, unit count and the exact cost: one rounding, half-even, to 20 decimal places.
  it.each<[string, string, string | bigint, number, string]>([
    ['tiny amounts, never in exponent form', '0.000000012', '1', 1, '0.000000012'],
    ['a tiny quantity', '0.000000012', '0.000000001', 1, '0.000000000000000012'],
    ['a zero quantity', '0.000000012', '0', 1, '0'],
    ['21 decimal places, rounded once to 20', '0.000000012', '0.000000000001', 1, '0.00000000000000000001'],
    [
      'huge amounts and quantities (30+ digits)',
      '123456789012345678901234567890.12345678',
      '987654321098765432109876543210',
      1,
      '121932631137021795226185032733744855954473403443334857491122.2374638',
    ],
    [
      'a huge bigint quantity',
      '123456789012345678901234567890.12345678',
      987654321098765432109876543210n,
      1,
      '121932631137021795226185032733744855954473403443334857491122.2374638',
    ],
    [
      'a 40-character amount, a 60-digit quantity and the largest unit count',
      '123456789012345678901234567890.12345678',
      '987654321098765432109876543210.987654321098765432109876543210',
      2147483647,
      '56779306006525224648746781694988520015310004937402.46047324428464891331',
    ],
    [
      'the largest amount and quantity',
      '99999999999999999999999999999999999999.9',
      '9'.repeat(60),
      7,
      '14285714285714285714285714285714285714271428571428571428571414285714285714285714285714285714285714.3',
    ],
    ['the largest unit count', '1', '1', 2147483647, '0.00000000046566128752'],
    ['a third', '1', '1', 3, '0.33333333333333333333'],
    ['two thirds, rounded up', '2', '1', 3, '0.66666666666666666667'],
    ['a third three times: 1, not 0.99999999999999999999', '1', '3', 3, '1'],
    ['a tie rounded down to even', '0.000000000000000000025', '1', 1, '0.00000000000000000002'],
    ['a tie rounded up to even', '0.000000000000000000035', '1', 1, '0.00000000000000000004'],
    ['a tie at 15', '0.000000000000000000015', '1', 1, '0.00000000000000000002'],
    ['past a tie', '0.0000000000000000000251', '1', 1, '0.00000000000000000003'],
  ])('stays exact: %s', async (_what, amount, quantity, count, cost) => {
    expect(await egressCost(amount, quantity, count)).toBe(cost);
  });

  it('rounds a division that does not terminate once, to 20 decimal places, for seconds too', async () => {
    const per3600 = await serviceOf([
      record({ key: 'compute.g2.4', unit: 'seconds', count: 3600, amount: '0.0610', from }),
    ]);
    expect(costOf(per3600.service.quote('compute.g2.4', '1'))).toBe('0.00001694444444444444');
  });

  it('takes bigint and string quantities, and reports the quantity as a decimal string', async () => {
    const { service } = await serviceOf([gp1]);
    expect(service.quote('storage.gp1', 0n)).toMatchObject({ quantity: '0', cost: '0' });
    expect(service.quote('storage.gp1', 1460n)).toMatchObject({ quantity: '1460', cost: '0.096' });
    expect(service.quote('storage.gp1', 10n ** 40n)).toMatchObject({
      quantity: '1' + '0'.repeat(40),
      cost: '657534246575342465753424657534246575.34246575342465753425',
    });
    expect(service.quote('storage.gp1', '365')).toMatchObject({ quantity: '365', cost: '0.024' });
    expect(service.quote('storage.gp1', '0.5')).toMatchObject({ quantity: '0.5', cost: '0.00003287671232876712' });
  });

  it('uses the organization price for an organization, the list price otherwise', async () => {
    const org = record({ key: 'storage.gp1', org: 'org_42', unit: 'gib_hours', count: 730, amount: '0.0400', from });
    const { service } = await serviceOf([gp1, org]);
    expect(service.quote('storage.gp1', '730', { organizationId: 'org_42' })).toMatchObject({
      price: { scope: 'organization', organizationId: 'org_42', amount: '0.0400' },
      cost: '0.04',
    });
    expect(service.quote('storage.gp1', '730', { organizationId: 'org_7' })).toMatchObject({
      price: { scope: 'list' },
      cost: '0.048',
    });
    expect(service.quote('storage.gp1', '730')).toMatchObject({ price: { scope: 'list' }, cost: '0.048' });
  });

  it('prices at the instant asked for', async () => {
    const old = record({
      key: 'storage.gp1',
      unit: 'gib_hours',
      count: 730,
      amount: '0.0480',
      from,
      until: '2026-07-01T00:00:00Z',
    });
    const next = record({
      key: 'storage.gp1',
      unit: 'gib_hours',
      count: 730,
      amount: '0.0730',
      from: '2026-07-01T00:00:00Z',
    });
    const { service } = await serviceOf([old, next]);
    expect(costOf(service.quote('storage.gp1', '730', { at: new Date('2026-06-30T23:59:59.999Z') }))).toBe('0.048');
    expect(costOf(service.quote('storage.gp1', '730', { at: new Date('2026-07-01T00:00:00.000Z') }))).toBe('0.073');
  });

  it.each<[string, string | bigint]>([
    ['negative', '-1'],
    ['negative bigint', -1n],
    ['exponent', '1e3'],
    ['exponent with fraction', '1.5E2'],
    ['empty', ''],
    ['a sign', '+1'],
    ['a leading zero', '01'],
    ['a trailing dot', '1.'],
    ['a leading dot', '.5'],
    ['whitespace', ' 1'],
    ['a comma', '1,5'],
    ['NaN', 'NaN'],
    ['Infinity', 'Infinity'],
    ['hex', '0x10'],
    ['61 digits', '1'.repeat(61)],
  ])('refuses a quantity with %s with INVALID_QUANTITY', async (_label, quantity) => {
    const { service } = await serviceOf([gp1]);
    const error = thrownBy(() => service.quote('storage.gp1', quantity));
    expect(error.code).toBe(PricingErrorCode.InvalidQuantity);
    expect(error.code).toBe('INVALID_QUANTITY');
    expect(error.details).toEqual({ quantity: String(quantity) });
  });

  it('refuses a JavaScript number from an untyped caller with INVALID_QUANTITY', async () => {
    const { service } = await serviceOf([gp1]);
    const error = thrownBy(() => service.quote('storage.gp1', 0.1 as unknown as string));
    expect(error.code).toBe('INVALID_QUANTITY');
  });

  it('accepts a quantity of 60 digits', async () => {
    const egress = (await serviceOf([record({ key: 'network.vpc_egress', unit: 'gb', count: 1, amount: '1', from })]))
      .service;
    expect(costOf(egress.quote('network.vpc_egress', '9'.repeat(60)))).toBe('9'.repeat(60));
    expect(costOf(egress.quote('network.vpc_egress', `0.${'9'.repeat(59)}`))).toBe('1');
  });

  it('answers { found: false } when there is no price, as priceAt does', async () => {
    const scheduled = record({
      key: 'compute.g2.4',
      unit: 'seconds',
      count: 3600,
      amount: '0.0610',
      from: '2026-07-01T00:00:00Z',
    });
    const { service } = await serviceOf([gp1, scheduled]);
    expect(service.quote('storage.snapshot', '1')).toEqual({ found: false });
    expect(service.quote('compute.g2.4', '3600')).toEqual({ found: false });
    expect(service.quote('storage.gp1', '730', { at: new Date('2025-12-31T23:59:59.999Z') })).toEqual({ found: false });
    expect(costOf(service.quote('compute.g2.4', '3600', { at: new Date('2026-07-01T00:00:00Z') }))).toBe('0.061');
  });

  it('throws PRICING_UNAVAILABLE when no snapshot can be served', async () => {
    const { service, cache } = await serviceOf([gp1]);
    cache.replace(undefined);
    expect(thrownBy(() => service.quote('storage.gp1', '730')).code).toBe('PRICING_UNAVAILABLE');
  });
});

describe('PricingService.costOfUsage and costOfEvents', () => {
  const listGp1 = record({
    key: 'storage.gp1',
    unit: 'gib_hours',
    count: 730,
    amount: '0.0730',
    from: '2026-01-01T00:00:00Z',
    until: '2026-02-01T00:00:00Z',
  });
  const listGp1Later = record({
    key: 'storage.gp1',
    unit: 'gib_hours',
    count: 730,
    amount: '0.1460',
    from: '2026-02-01T00:00:00Z',
  });
  const orgGp1 = record({
    key: 'storage.gp1',
    org: 'org_42',
    unit: 'gib_hours',
    count: 730,
    amount: '0',
    from: '2026-01-25T00:00:00Z',
    until: '2026-01-26T00:00:00Z',
  });
  const egress = record({
    key: 'network.vpc_egress',
    unit: 'gb',
    count: 1,
    amount: '0.01',
    from: '2026-01-01T00:00:00Z',
  });

  it('splits a volume at the price change and at the organization price inside it, with public prices', async () => {
    const { service } = await serviceOf([listGp1, listGp1Later, orgGp1, egress]);
    const usage = { from: new Date('2026-01-24T00:00:00Z'), to: new Date('2026-02-02T00:00:00Z'), sizeGib: '10' };
    const cost = service.costOfUsage('storage.gp1', usage, { organizationId: 'org_42' });
    // 10 GiB × 24 h = 240 GiB-hours a day; 0.0730 per 730 is 0.0001 per GiB-hour, then 0.0002.
    expect(cost.lines.map((l) => [l.from.toISOString().slice(5, 10), l.quantity, l.price?.scope, l.cost])).toEqual([
      ['01-24', '240', 'list', '0.024'],
      ['01-25', '240', 'organization', '0'],
      ['01-26', '1440', 'list', '0.144'],
      ['02-01', '240', 'list', '0.048'],
    ]);
    expect(cost).toMatchObject({ total: '0.216', complete: true });
    expect(Object.keys(cost.lines[1].price!).sort()).toEqual(
      ['amount', 'organizationId', 'productKey', 'scope', 'unitCount', 'unitType', 'validFrom', 'validUntil'].sort(),
    );
    // Without the organization, list prices only.
    expect(service.costOfUsage('storage.gp1', usage).total).toBe('0.24');
  });

  it('prices metered events, bytes as decimal GB', async () => {
    const { service } = await serviceOf([egress]);
    const cost = service.costOfEvents('network.vpc_egress', [
      { at: new Date('2026-03-01T00:00:00Z'), bytes: 1_500_000_000n },
      { at: new Date('2026-03-02T00:00:00Z'), quantity: '0.5' },
    ]);
    expect(cost).toMatchObject({ total: '0.02', complete: true });
    expect(cost.lines).toHaveLength(1);
    expect(cost.lines[0]).toMatchObject({ quantity: '2', cost: '0.02', price: { productKey: 'network.vpc_egress' } });
  });

  it('refuses an unknown product, and answers nothing before prices are loaded', async () => {
    const { service, cache } = await serviceOf([egress]);
    const interval = { from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-03-02T00:00:00Z') };
    expect(thrownBy(() => service.costOfUsage('storage.gp9', interval)).code).toBe('UNKNOWN_PRODUCT');
    expect(thrownBy(() => service.costOfUsage('network.vpc_egress', interval)).code).toBe('INVALID_USAGE');
    cache.replace(undefined);
    expect(thrownBy(() => service.costOfEvents('network.vpc_egress', [])).code).toBe('PRICING_UNAVAILABLE');
  });
});
