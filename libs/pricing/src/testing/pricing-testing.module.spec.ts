import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Clock, ManualClock } from '@app/clock';
import { PriceBookRefusedError, PricingErrorCode, ProductUnavailableError } from '../errors/pricing-error';
import type { PriceListDocument, PriceListEntry } from '../core/price-list';
import { PricingService } from '../services/pricing.service';
import { listPrice, organizationPrice } from './price-book-entries';
import { PricingTestingBook, PricingTestingModule, type PriceBookJson } from './pricing-testing.module';

// PricingTestingModule: PricingService on prices in memory, for another team's unit specs.

const BOOK: PriceBookJson = {
  products: [{ product_key: 'storage.st1', on_sale: true }],
  prices: [
    listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z', '2026-03-21T00:00:00Z'),
    listPrice('storage.gp1', 'gib_hours', 730, '0.0500', '2026-03-21T00:00:00Z'),
    listPrice('storage.st1', 'gib_hours', 730, '0.0250', '2026-01-01T00:00:00Z'),
    listPrice('storage.io1', 'gib_hours', 730, '0.1250', '2026-01-01T00:00:00Z'),
    organizationPrice('org_42', 'storage.gp1', 'gib_hours', 730, '0.0400', '2026-02-01T00:00:00Z'),
    // No valid_from: from the clock's instant when the module is compiled.
    { product_key: 'compute.g2.4', unit_type: 'seconds', unit_count: 3600, amount: '0.0610' },
  ],
};

/** A feature module of another team: it injects PricingService and Clock, and imports nothing for them. */
@Injectable()
class Orders {
  constructor(
    private readonly pricing: PricingService,
    readonly clock: Clock,
  ) {}

  order(productKey: string): Date {
    this.pricing.assertOrderable(productKey);
    return this.clock.now();
  }
}

@Module({ providers: [Orders], exports: [Orders] })
class OrdersModule {}

/** The public list's entry of `productKey`. */
function listed(productKey: string, document: PriceListDocument): PriceListEntry | undefined {
  return document.families.flatMap((family) => family.prices).find((entry) => entry.product_key === productKey);
}

async function compile(book: PriceBookJson, clock: Clock): Promise<TestingModule> {
  return Test.createTestingModule({ imports: [PricingTestingModule.forRoot({ book, clock }), OrdersModule] }).compile();
}

describe('PricingTestingModule', () => {
  const clock = new ManualClock('2026-03-20T12:00:00Z');
  let moduleRef: TestingModule;
  let pricing: PricingService;

  beforeAll(async () => {
    moduleRef = await compile(BOOK, clock);
    pricing = moduleRef.get(PricingService);
  });

  afterAll(() => moduleRef.close());

  it('answers lookups from the book at the clock instant: list and organization prices, quotes', async () => {
    await expect(pricing.whenReady(10)).resolves.toBeUndefined();
    expect(pricing.priceAt('storage.gp1')).toMatchObject({ found: true, price: { amount: '0.0480', scope: 'list' } });
    expect(pricing.priceAt('storage.gp1', { organizationId: 'org_42' })).toMatchObject({
      found: true,
      price: { amount: '0.0400', scope: 'organization', validFrom: new Date('2026-02-01T00:00:00Z') },
    });
    expect(pricing.priceAt('storage.gp1', { at: new Date('2025-12-31T00:00:00Z') })).toEqual({
      found: false,
      asRecordedAt: new Date('2026-03-20T12:00:00Z'),
    });
    expect(pricing.quote('compute.g2.4', '5400')).toMatchObject({
      found: true,
      cost: '0.0915',
      price: { validFrom: new Date('2026-03-20T12:00:00Z') },
    });
    expect(pricing.health()).toMatchObject({ servable: true, version: '1' });
  });

  it('moves with the clock: the price in force, orderability and the public list', () => {
    expect(listed('storage.gp1', pricing.priceList())).toMatchObject({ amount: '0.0480' });
    clock.set('2026-03-21T00:00:00Z');
    try {
      expect(pricing.priceAt('storage.gp1')).toMatchObject({ found: true, price: { amount: '0.0500' } });
      expect(listed('storage.gp1', pricing.priceList())).toMatchObject({ amount: '0.0500' });
      expect(pricing.priceList().last_changed).toBe('2026-03-21T00:00:00Z');
      clock.set('2026-03-20T11:59:59.999Z');
      expect(pricing.quote('compute.g2.4', '1')).toMatchObject({ found: false });
      expect(() => pricing.assertOrderable('compute.g2.4')).toThrow(ProductUnavailableError);
      clock.advance(1);
      expect(() => pricing.assertOrderable('compute.g2.4')).not.toThrow();
    } finally {
      clock.set('2026-03-20T12:00:00Z');
    }
  });

  it('starts from the availability of a migrated database: io1 is not on sale, st1 is as the book says', () => {
    const orders = moduleRef.get(Orders);
    expect(() => orders.order('storage.io1')).toThrow(
      expect.objectContaining({ code: PricingErrorCode.ProductUnavailable, details: { product_key: 'storage.io1' } }),
    );
    expect(pricing.isOnSale('storage.io1')).toBe(false);
    expect(orders.order('storage.st1')).toEqual(new Date('2026-03-20T12:00:00Z'));
    expect(orders.clock).toBe(clock);
  });

  it('prices usage across the price change, and rounds its lines for an invoice', () => {
    const usage = pricing.costOfUsage('storage.gp1', {
      from: new Date('2026-03-01T00:00:00Z'),
      to: new Date('2026-04-01T00:00:00Z'),
      sizeGib: '100',
    });
    expect(usage.lines.map((line) => pricing.roundForInvoice(line.cost!))).toEqual(['3.16', '1.81']);
  });

  it('refresh() has nothing to read', async () => {
    await expect(pricing.refresh()).resolves.toBeUndefined();
  });
});

describe('PricingTestingModule.forRoot', () => {
  it('fails the compile on a book the import would refuse, naming the entry', async () => {
    const bad = { prices: [listPrice('storage.gp1', 'gib_hours', 730, '-1', '2026-01-01T00:00:00Z')] };
    const compiling = compile(bad, new ManualClock('2026-03-20T00:00:00Z'));
    await expect(compiling).rejects.toBeInstanceOf(PriceBookRefusedError);
    await expect(compiling).rejects.toThrow('prices[0].amount');
  });

  it('with no book, has no prices; without a clock, stands still at the instant it was called', async () => {
    const before = Date.now();
    const moduleRef = await Test.createTestingModule({ imports: [PricingTestingModule.forRoot()] }).compile();
    const pricing = moduleRef.get(PricingService);
    const now = moduleRef.get(Clock).nowMs();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(pricing.priceAt('storage.gp1')).toEqual({ found: false, asRecordedAt: new Date(now) });
    expect(pricing.priceList().families).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(moduleRef.get(Clock).nowMs()).toBe(now);
    await moduleRef.close();
  });

  it('takes a clock given with overrideProvider(Clock), the prices planned at its instant', async () => {
    const clock = new ManualClock('2027-01-01T00:00:00Z');
    const moduleRef = await Test.createTestingModule({ imports: [PricingTestingModule.forRoot({ book: BOOK })] })
      .overrideProvider(Clock)
      .useValue(clock)
      .compile();
    expect(moduleRef.get(PricingService).priceAt('compute.g2.4')).toMatchObject({
      found: true,
      price: { validFrom: new Date('2027-01-01T00:00:00Z') },
    });
    await moduleRef.close();
  });

  it('leaves nothing running: no timer set, no handle open', async () => {
    const handles = () => process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
    const before = handles();
    const timeouts = jest.spyOn(global, 'setTimeout');
    const intervals = jest.spyOn(global, 'setInterval');
    try {
      const moduleRef = await compile(BOOK, new ManualClock('2026-03-20T12:00:00Z'));
      await moduleRef.init();
      moduleRef.get(PricingService).priceList();
      expect([timeouts.mock.calls.length, intervals.mock.calls.length]).toEqual([0, 0]);
      expect(handles()).toEqual(before);
      await moduleRef.close();
    } finally {
      timeouts.mockRestore();
      intervals.mockRestore();
    }
  });
});

describe('PricingTestingBook: prices changed after the compile, and the book as recorded before', () => {
  const clock = new ManualClock('2026-03-20T12:00:00Z');
  let moduleRef: TestingModule;
  let pricing: PricingService;
  let book: PricingTestingBook;
  const march = { from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-04-01T00:00:00Z'), sizeGib: '100' };

  beforeAll(async () => {
    moduleRef = await compile(BOOK, clock);
    pricing = moduleRef.get(PricingService);
    book = moduleRef.get(PricingTestingBook);
  });

  afterAll(() => moduleRef.close());

  it('writes a book at the clock’s instant: answered at once, and the book before it as recorded before', async () => {
    const before = pricing.costOfUsage('storage.gp1', march, { organizationId: 'org_7' });
    expect(before.asRecordedAt).toEqual(new Date('2026-03-20T12:00:00Z'));
    clock.set('2026-04-10T00:00:00Z');
    // A correction recorded in April: org_7 agreed 0.0300 from 1 March (a backfill).
    await book.apply({
      prices: [organizationPrice('org_7', 'storage.gp1', 'gib_hours', 730, '0.0300', '2026-03-01T00:00:00Z')],
    });
    const after = pricing.costOfUsage('storage.gp1', march, { organizationId: 'org_7' });
    expect(after.lines.map((line) => [line.price?.scope, line.price?.amount])).toEqual([['organization', '0.0300']]);
    expect(after.asRecordedAt).toEqual(new Date('2026-04-10T00:00:00Z'));
    // The March invoice, re-priced with the book it was priced from: the same figures, line for line.
    const again = pricing.costOfUsage('storage.gp1', march, {
      organizationId: 'org_7',
      asRecordedAt: before.asRecordedAt,
    });
    expect(again).toEqual(before);
  });

  it('gives an end set later back as it was, and refuses a write before the last one and a book it would refuse', async () => {
    clock.set('2026-04-20T00:00:00Z');
    // gp1 0.0500 gets an end in May, set now.
    await book.apply({
      prices: [
        listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z', '2026-03-21T00:00:00Z'),
        listPrice('storage.gp1', 'gib_hours', 730, '0.0500', '2026-03-21T00:00:00Z'),
        listPrice('storage.gp1', 'gib_hours', 730, '0.0550', '2026-05-01T00:00:00Z'),
      ],
    });
    const may = new Date('2026-05-02T00:00:00Z');
    expect(pricing.priceAt('storage.gp1', { at: may })).toMatchObject({ found: true, price: { amount: '0.0550' } });
    const asBefore = pricing.priceAt('storage.gp1', { at: may, asRecordedAt: new Date('2026-04-19T00:00:00Z') });
    expect(asBefore).toMatchObject({ found: true, price: { amount: '0.0500', validUntil: null } });
    // The public document of May as the book recorded it before the change was written, and after.
    const gp1In = (document: PriceListDocument) => listed('storage.gp1', document);
    expect(gp1In(pricing.priceList(may, { asRecordedAt: new Date('2026-04-19T00:00:00Z') }))).toMatchObject({
      amount: '0.0500',
      valid_until: null,
    });
    expect(gp1In(pricing.priceList(may))).toMatchObject({ amount: '0.0550' });
    expect(gp1In(pricing.priceList(may, { asRecordedAt: new Date('2026-04-20T00:00:00Z') }))).toMatchObject({
      amount: '0.0550',
    });
    expect(pricing.priceAt('storage.gp1', { at: new Date('2026-04-21T00:00:00Z') })).toMatchObject({
      price: { amount: '0.0500', validUntil: new Date('2026-05-01T00:00:00Z') },
    });
    clock.set('2026-04-19T00:00:00Z');
    await expect(book.apply({ prices: [] })).rejects.toThrow("stands before the book's last write");
    clock.set('2026-04-21T00:00:00Z');
    await expect(
      book.apply({ prices: [listPrice('storage.gp1', 'gib_hours', 730, '-1', '2026-06-01T00:00:00Z')] }),
    ).rejects.toBeInstanceOf(PriceBookRefusedError);
    expect(pricing.priceAt('storage.gp1', { at: may })).toMatchObject({ found: true, price: { amount: '0.0550' } });
  });

  it('refuses a book as recorded later than now', () => {
    const later = new Date(clock.nowMs() + 1);
    expect(() => pricing.priceAt('storage.gp1', { asRecordedAt: later })).toThrow(
      expect.objectContaining({ code: PricingErrorCode.FutureInstant }),
    );
  });
});
