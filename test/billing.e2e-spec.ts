import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { appDatabaseOptions } from '@app/control-plane';
import { DatabaseModule } from '@app/database';
import { PricingModule, PricingService, sumCosts, type UsageCost } from '@app/pricing';
import { withPriceBook } from '@app/pricing/cli';
import { listPrice, organizationPrice } from '@app/pricing/testing';
import { runCli } from './support/cli';
import { applyBook, untilWritesPublished, useTestDatabase } from './support/database';
import { useTempDir } from './support/temp-dir';

// Another team's billing, wired as they would: PricingModule.forRoot() in the root module and
// nothing else for pricing; whenReady() before the run; only @app/pricing (and its testing entry
// point). A volume existed across a price change that an operator imported with the CLI.

interface InvoiceLine {
  readonly description: string;
  readonly cost: UsageCost;
}

@Injectable()
class InvoiceService {
  constructor(private readonly pricing: PricingService) {}

  /** One invoice line for a volume of `sizeGib` GiB of `storageClass` that existed over [from, to). */
  volumeLine(storageClass: string, sizeGib: string, from: Date, to: Date): InvoiceLine {
    const cost = this.pricing.costOfUsage(`storage.${storageClass}`, { from, to, sizeGib });
    return { description: `${sizeGib} GiB ${storageClass} volume`, cost };
  }
}

@Module({ providers: [InvoiceService], exports: [InvoiceService] })
class BillingModule {}

const database = useTestDatabase();
const dir = useTempDir('billing');

describe('a billing module prices a month of a volume across a price change', () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    const db = database;
    // A backfill of a key without records: its history, with the change on 1 February.
    const file = await dir.write('book.json', {
      prices: [
        listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z'),
        listPrice('storage.gp1', 'gib_hours', 730, '0.0584', '2026-02-01T00:00:00Z'),
      ],
    });
    const imported = await runCli(['import', file], { DATABASE_URL: db.url });
    expect([imported.code, imported.stderr]).toEqual([0, '']);
    // Prices answer from their write's publication instant on, as the public list does.
    await untilWritesPublished(db.dataSource);
    moduleRef = await Test.createTestingModule({
      imports: [DatabaseModule.forRoot(appDatabaseOptions(db.url)), PricingModule.forRoot(), BillingModule],
    }).compile();
    moduleRef.useLogger(['error']);
    await moduleRef.init();
    await moduleRef.get(PricingService).whenReady();
  });

  // Before the file's database is dropped: this describe's hooks run first.
  afterAll(() => moduleRef?.close());

  it('100 GiB from 20 January to 15 February: part at the old price, part at the new one, exactly', () => {
    const line = moduleRef
      .get(InvoiceService)
      .volumeLine('gp1', '100', new Date('2026-01-20T00:00:00Z'), new Date('2026-02-15T00:00:00Z'));
    expect(
      line.cost.lines.map((l) => [l.from.toISOString(), l.to.toISOString(), l.quantity, l.price?.amount, l.cost]),
    ).toEqual([
      // 12 days × 24 h × 100 GiB × 0.0480 / 730
      ['2026-01-20T00:00:00.000Z', '2026-02-01T00:00:00.000Z', '28800', '0.0480', '1.89369863013698630137'],
      // 14 days × 24 h × 100 GiB × 0.0584 / 730
      ['2026-02-01T00:00:00.000Z', '2026-02-15T00:00:00.000Z', '33600', '0.0584', '2.688'],
    ]);
    expect(line.cost).toMatchObject({ total: '4.58169863013698630137', complete: true });
    expect(sumCosts(line.cost.lines.map((l) => l.cost ?? '0'))).toBe(line.cost.total);
  });

  it('before the first price, the part with no price is an explicit unpriced line, never zero', () => {
    const line = moduleRef
      .get(InvoiceService)
      .volumeLine('gp1', '100', new Date('2025-12-31T00:00:00Z'), new Date('2026-01-02T00:00:00Z'));
    expect(line.cost.complete).toBe(false);
    expect(line.cost.lines.map((l) => [l.priced, l.quantity, l.cost])).toEqual([
      [false, '2400', null],
      [true, '2400', '0.15780821917808219178'],
    ]);
    expect(line.cost.total).toBe('0.15780821917808219178');
  });
});

describe('an invoice re-priced with its asRecordedAt: the same figures after any later write', () => {
  const db = useTestDatabase({
    book: { prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z')] },
  });
  let moduleRef: TestingModule;
  const january = { from: new Date('2026-01-10T00:00:00Z'), to: new Date('2026-01-20T00:00:00Z'), sizeGib: '100' };
  const later = new Date('2027-02-01T00:00:00Z');

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [DatabaseModule.forRoot(appDatabaseOptions(db.url)), PricingModule.forRoot()],
    }).compile();
    moduleRef.useLogger(['error']);
    await moduleRef.init();
    await moduleRef.get(PricingService).whenReady();
  });

  afterAll(() => moduleRef?.close());

  it('a backfilled agreed price, an end set, then withdrawn: each past book priced as it was recorded', async () => {
    const pricing = moduleRef.get(PricingService);
    const invoice = pricing.costOfUsage('storage.gp1', january, { organizationId: 'org_7' });
    expect(invoice.lines.map((l) => [l.price?.scope, l.price?.id, l.cost])).toEqual([
      ['list', expect.any(Number), '1.57808219178082191781'],
    ]);
    // org_7's agreed price from 1 January, recorded now (a correction); open.
    await applyBook(db.dataSource, {
      prices: [organizationPrice('org_7', 'storage.gp1', 'gib_hours', 730, '0.0400', '2026-01-01T00:00:00Z')],
    });
    await pricing.refresh();
    const corrected = pricing.costOfUsage('storage.gp1', january, { organizationId: 'org_7' });
    expect(corrected.lines.map((l) => [l.price?.scope, l.cost])).toEqual([['organization', '1.31506849315068493151']]);
    expect(corrected.asRecordedAt.getTime()).toBeGreaterThan(invoice.asRecordedAt.getTime());
    const agreedAt = corrected.asRecordedAt;
    // A change of org_7's price scheduled for 2027 (its end set), then withdrawn (the end lifted).
    await applyBook(db.dataSource, {
      prices: [organizationPrice('org_7', 'storage.gp1', 'gib_hours', 730, '0.0350', '2027-01-01T00:00:00Z')],
    });
    await pricing.refresh();
    const scheduledAt = pricing.priceAt('storage.gp1', { organizationId: 'org_7', at: later }).asRecordedAt;
    await withPriceBook(db.dataSource, (book) =>
      book.withdraw({
        productKey: 'storage.gp1',
        organizationId: 'org_7',
        validFrom: Date.parse('2027-01-01T00:00:00Z'),
      }),
    );
    await untilWritesPublished(db.dataSource);
    await pricing.refresh();

    // The closed January invoice, re-priced with its asRecordedAt: the same, to the line.
    expect(
      pricing.costOfUsage('storage.gp1', january, { organizationId: 'org_7', asRecordedAt: invoice.asRecordedAt }),
    ).toEqual(invoice);
    const at = (asRecordedAt: Date) =>
      pricing.priceAt('storage.gp1', { organizationId: 'org_7', at: later, asRecordedAt });
    expect(at(agreedAt)).toMatchObject({ price: { scope: 'organization', amount: '0.0400', validUntil: null } });
    // While the change was scheduled, the agreed price ended with 2026 (the withdrawn price is gone: list from then).
    expect(at(scheduledAt)).toMatchObject({ price: { scope: 'list', amount: '0.0480' } });
    expect(
      pricing.priceAt('storage.gp1', {
        organizationId: 'org_7',
        at: new Date('2026-12-31T00:00:00Z'),
        asRecordedAt: scheduledAt,
      }),
    ).toMatchObject({
      price: { amount: '0.0400', validUntil: new Date('2027-01-01T00:00:00Z') },
    });
    expect(pricing.priceAt('storage.gp1', { organizationId: 'org_7', at: later })).toMatchObject({
      price: { scope: 'organization', amount: '0.0400', validUntil: null },
    });

    // An instance that starts now reads the same past from the database (an end changed twice: the log).
    const fresh = await Test.createTestingModule({
      imports: [DatabaseModule.forRoot(appDatabaseOptions(db.url)), PricingModule.forRoot()],
    }).compile();
    fresh.useLogger(['error']);
    await fresh.init();
    try {
      const restarted = fresh.get(PricingService);
      await restarted.whenReady();
      for (const asRecordedAt of [invoice.asRecordedAt, agreedAt, scheduledAt]) {
        expect(restarted.priceAt('storage.gp1', { organizationId: 'org_7', at: later, asRecordedAt })).toEqual(
          at(asRecordedAt),
        );
      }
      expect(
        restarted.costOfUsage('storage.gp1', january, { organizationId: 'org_7', asRecordedAt: invoice.asRecordedAt }),
      ).toEqual(invoice);
    } finally {
      await fresh.close();
    }
  });
});
