import {
  gp1,
  gp1Priced,
  io1,
  NOT_ON_SALE,
  NOW,
  record,
  serviceOf,
  snapshotOf,
  st1,
  thrownBy,
} from './pricing-service.fixture';
import {
  PricingErrorCode,
  PricingUnavailableError,
  ProductUnavailableError,
  UnknownProductError,
} from '../errors/pricing-error';

/** Every answer names the book it was read from: as recorded now, unless asked otherwise. */
const NOW_RECORDED = new Date(NOW);

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
    const ended = gp1Priced('0.0480', { from: '2026-01-01T00:00:00Z', until: '2026-06-01T00:00:00Z' });
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
    const scheduled = gp1Priced('0.05', { from: '2026-07-01T00:00:00Z' });
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
  const listA = gp1Priced('0.0480', { from: '2026-01-01T00:00:00Z', until: '2026-07-01T00:00:00Z' });
  const listB = gp1Priced('0.0520', { from: '2026-07-01T00:00:00Z' });
  const org42 = gp1Priced('0.0400', { org: 'org_42', from: '2026-03-01T00:00:00Z', until: '2026-09-01T00:00:00Z' });
  const org7 = gp1Priced('0.0300', { org: 'org_7', from: '2026-01-01T00:00:00Z' });
  const records = [listA, listB, org42, org7];

  it("returns the organization's agreed price in force over the list price", async () => {
    const { service } = await serviceOf(records);
    expect(service.priceAt('storage.gp1', { organizationId: 'org_42' })).toEqual({
      found: true,
      asRecordedAt: NOW_RECORDED,
      price: {
        id: org42.id,
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
      asRecordedAt: NOW_RECORDED,
      price: {
        id: listA.id,
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
    expect(at('2025-12-31T23:59:59.999Z')).toEqual({ found: false, asRecordedAt: NOW_RECORDED });
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
    expect(service.priceAt('storage.snapshot')).toEqual({ found: false, asRecordedAt: NOW_RECORDED });
    expect(service.priceAt('storage.snapshot', { organizationId: 'org_42' })).toEqual({
      found: false,
      asRecordedAt: NOW_RECORDED,
    });
    expect(thrownBy(() => service.priceAt('not a key')).code).toBe('UNKNOWN_PRODUCT'); // a typo is no "no price"
    expect(service.priceAt('network.vpc_egress')).toEqual({ found: false, asRecordedAt: NOW_RECORDED });
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
    expect(service.priceAt('compute.g2.4')).toEqual({ found: false, asRecordedAt: NOW_RECORDED });
    expect(service.priceAt('compute.g2.4', { organizationId: 'org_7' })).toEqual({
      found: false,
      asRecordedAt: NOW_RECORDED,
    });
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
    const changed = gp1Priced('0.0490', { from: '2026-01-01T00:00:00Z' });
    cache.replace(await snapshotOf([changed]));
    expect(service.priceAt('storage.gp1')).toMatchObject({ found: true, price: { amount: '0.0490' } });
  });
});

describe('PricingService.priceListAsOf', () => {
  it('gives the list as served at an instant, with the ETag GET /v1/pricing/at/{instant} serves', async () => {
    const { service, clock } = await serviceOf([gp1, st1, io1], NOT_ON_SALE);
    const now = await service.priceListAsOf(clock.now());
    expect(now.document).toEqual(service.priceList());
    expect(now.etag).toMatch(/^W\/"[A-Za-z0-9_-]{32}"$/);
    const before = await service.priceListAsOf(new Date('2025-06-01T00:00:00Z'));
    expect(before.document).toEqual({ currency: 'EUR', amounts_exclude_vat: true, last_changed: null, families: [] });
    expect(before.etag).not.toBe(now.etag);
  });

  it('refuses an instant later than now (FUTURE_INSTANT), and answers PRICING_UNAVAILABLE without prices', async () => {
    const { service, cache, clock } = await serviceOf([gp1]);
    await expect(service.priceListAsOf(new Date(clock.nowMs() + 1))).rejects.toMatchObject({ code: 'FUTURE_INSTANT' });
    cache.replace(undefined);
    await expect(service.priceListAsOf(clock.now())).rejects.toMatchObject({ code: 'PRICING_UNAVAILABLE' });
  });
});

describe('PricingService.roundForInvoice', () => {
  it("rounds each priced line's cost to the cent, half up: the invoice adds the rounded lines", async () => {
    const before = gp1Priced('0.0480', { from: '2026-01-01T00:00:00Z', until: '2026-03-21T00:00:00Z' });
    const after = gp1Priced('0.0500', { from: '2026-03-21T00:00:00Z' });
    const { service } = await serviceOf([before, after]);
    const march = { from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-04-01T00:00:00Z'), sizeGib: '100' };
    const usage = service.costOfUsage('storage.gp1', march);
    expect(usage.lines.map((line) => (line.priced ? service.roundForInvoice(line.cost) : null))).toEqual([
      '3.16',
      '1.81',
    ]);
    expect(service.roundForInvoice(usage.total)).toBe('4.96'); // not the invoice's amount: 3.16 + 1.81 = 4.97
  });

  it('answers without prices, and refuses what is not a decimal cost', async () => {
    const { service, cache } = await serviceOf([]);
    cache.replace(undefined);
    expect(service.roundForInvoice('0.125')).toBe('0.13');
    const error = thrownBy(() => service.roundForInvoice('0,125'));
    expect(error).toMatchObject({ code: 'INVALID_COST', details: { cost: '"0,125"' } });
    expect(error.message).toBe('not a plain non-negative decimal cost: "0,125"');
  });
});

describe('PricingService reads, given a product key that fits no family', () => {
  const at = new Date('2026-03-01T00:00:00Z');
  const interval = { from: at, to: new Date('2026-03-02T00:00:00Z') };
  const reads: [string, (service: Awaited<ReturnType<typeof serviceOf>>['service'], key: string) => unknown][] = [
    ['priceAt', (service, key) => service.priceAt(key, { at })],
    ['priceAt for an organization', (service, key) => service.priceAt(key, { at, organizationId: 'org_42' })],
    ['quote', (service, key) => service.quote(key, '1', { at })],
    ['costOfUsage', (service, key) => service.costOfUsage(key, { ...interval, sizeGib: '1' })],
    ['costOfEvents', (service, key) => service.costOfEvents(key, [{ at, quantity: '1' }])],
    [
      'focusRows',
      (service, key) =>
        service.focusRows(
          key,
          interval,
          {},
          {
            providerName: 'Example Cloud',
            billingAccountId: 'org_42',
            billingPeriodStart: at,
            billingPeriodEnd: new Date('2026-04-01T00:00:00Z'),
          },
        ),
    ],
  ];

  it.each(reads.flatMap(([read, call]) => ['storage.gp2', 'compute.x', 'Storage.gp1'].map((key) => [read, key, call])))(
    '%s refuses %s with UNKNOWN_PRODUCT, never "no price"',
    async (_read, key, call) => {
      const { service } = await serviceOf([gp1, st1, io1], NOT_ON_SALE);
      const error = thrownBy(() => (call as (typeof reads)[number][1])(service, key as string));
      expect(error).toBeInstanceOf(UnknownProductError);
      expect(error.code).toBe('UNKNOWN_PRODUCT');
      expect(error.details).toEqual({ product_key: key });
    },
  );

  it("answers a key of a family's shape that was never priced as unpriced: found false, an unpriced line", async () => {
    const { service } = await serviceOf([gp1, st1, io1], NOT_ON_SALE);
    expect(service.priceAt('compute.zz.9', { at })).toEqual({ found: false, asRecordedAt: NOW_RECORDED });
    expect(service.quote('compute.zz.9', '3600', { at })).toEqual({ found: false, asRecordedAt: NOW_RECORDED });
    const usage = service.costOfUsage('compute.zz.9', interval);
    expect(usage).toMatchObject({ total: '0', complete: false });
    expect(usage.lines).toEqual([{ priced: false, ...interval, quantity: '86400', price: null, cost: null }]);
    const events = service.costOfEvents('observability.api_request', [{ at, quantity: '5' }]);
    expect(events).toMatchObject({ complete: false, lines: [{ priced: false, quantity: '5' }] });
  });
});
