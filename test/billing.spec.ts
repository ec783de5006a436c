import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Clock } from '@app/clock';
import { PricingService, sumCosts } from '@app/pricing';
import { listPrice, ManualClock, organizationPrice, PricingTestingModule } from '@app/pricing/testing';

// Another team's billing, unit-tested as they would: prices in memory (PricingTestingModule), a
// clock that stands still, no PostgreSQL, no global setup (the `unit` Jest project): it runs in
// milliseconds wherever the spec sits. Only @app/pricing and its testing entry point.
// test/billing.e2e-spec.ts runs the same kind of billing against the database.

interface InvoiceLine {
  readonly description: string;
  /** EUR, two decimals. */
  readonly amount: string;
}

interface Invoice {
  readonly lines: readonly InvoiceLine[];
  readonly total: string;
}

/** Invoices the storage of one volume over the calendar month that ended before today. */
@Injectable()
class VolumeInvoices {
  constructor(
    private readonly pricing: PricingService,
    private readonly clock: Clock,
  ) {}

  lastMonth(volume: { storageClass: string; sizeGib: string; organizationId?: string }): Invoice {
    const now = this.clock.now();
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
    const usage = this.pricing.costOfUsage(
      `storage.${volume.storageClass}`,
      { from, to, sizeGib: volume.sizeGib },
      { organizationId: volume.organizationId },
    );
    if (!usage.complete) throw new Error(`storage.${volume.storageClass} has no price for part of the month`);
    const lines = usage.lines.map((line) => ({
      description: `${volume.sizeGib} GiB ${volume.storageClass}, ${day(line.from)} to ${day(line.to)} at ${line.price!.amount} per ${line.price!.unitCount} GiB-hours`,
      amount: this.pricing.roundForInvoice(line.cost!),
    }));
    return { lines, total: this.pricing.roundForInvoice(sumCosts(lines.map((line) => line.amount))) };
  }
}

const day = (at: Date): string => at.toISOString().slice(0, 10);

@Module({ providers: [VolumeInvoices], exports: [VolumeInvoices] })
class BillingModule {}

describe('billing a month of a volume, with prices in memory', () => {
  const clock = new ManualClock('2026-04-02T08:00:00Z');
  let moduleRef: TestingModule;

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [
        PricingTestingModule.forRoot({
          book: {
            prices: [
              // The list price of gp1 rose on 21 March.
              listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z', '2026-03-21T00:00:00Z'),
              listPrice('storage.gp1', 'gib_hours', 730, '0.0500', '2026-03-21T00:00:00Z'),
              organizationPrice('org_42', 'storage.gp1', 'gib_hours', 730, '0.0400', '2026-01-01T00:00:00Z'),
            ],
          },
          clock,
        }),
        BillingModule,
      ],
    }).compile();
  });

  afterAll(() => moduleRef.close());

  it('bills March as one line per price, each rounded to the cent, the total their sum: 4.97, not 4.96', () => {
    const invoice = moduleRef.get(VolumeInvoices).lastMonth({ storageClass: 'gp1', sizeGib: '100' });
    expect(invoice).toEqual({
      lines: [
        // 480 h × 100 GiB × 0.0480 / 730 = 3.15616...
        { description: '100 GiB gp1, 2026-03-01 to 2026-03-21 at 0.0480 per 730 GiB-hours', amount: '3.16' },
        // 264 h × 100 GiB × 0.0500 / 730 = 1.80821...
        { description: '100 GiB gp1, 2026-03-21 to 2026-04-01 at 0.0500 per 730 GiB-hours', amount: '1.81' },
      ],
      total: '4.97',
    });
  });

  it('bills an organization at its agreed price, and another month once the clock moves', () => {
    clock.set('2026-03-05T00:00:00Z');
    const invoice = moduleRef
      .get(VolumeInvoices)
      .lastMonth({ storageClass: 'gp1', sizeGib: '100', organizationId: 'org_42' });
    // February: 672 h × 100 GiB × 0.0400 / 730 = 3.68219...
    expect(invoice).toEqual({
      lines: [{ description: '100 GiB gp1, 2026-02-01 to 2026-03-01 at 0.0400 per 730 GiB-hours', amount: '3.68' }],
      total: '3.68',
    });
  });

  it('refuses to bill a month with no price for part of it', () => {
    clock.set('2026-01-15T00:00:00Z');
    expect(() => moduleRef.get(VolumeInvoices).lastMonth({ storageClass: 'gp1', sizeGib: '100' })).toThrow(
      'storage.gp1 has no price for part of the month',
    );
  });
});
