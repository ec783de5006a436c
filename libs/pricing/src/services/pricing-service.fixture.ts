// What the specs of PricingService share: a service on prices held in memory, with no database.
import type { UnitType } from '../catalogue/catalogue';
import { ManualClock } from '@app/clock';
import { PricingError } from '../errors/pricing-error';
import { thrownAs } from '../errors/thrown.fixture';
import type { PriceRecord } from '../core/price-record';
import { priceRecord } from '../core/price-record.fixture';
import { resolvePricingOptions } from '../options/pricing-options';
import { PricingService } from './pricing.service';
import type { QuoteLookup } from './pricing.types';
import type { PriceBookLoader } from '../snapshot/price-book-loader';
import { PricingSnapshot } from '../snapshot/pricing-snapshot';
import { PastAnswers } from '../snapshot/past-answers';
import { PricingState } from '../snapshot/pricing-state';

/** Stands in for PriceBookLoader: holds one snapshot, confirmed now, replaceable as an import would. */
export class HeldSnapshot {
  reads = 0;
  readonly databaseReachable = true;
  /** Every write is seen (PriceBookLoader.settledBefore); a test of a lost database sets it. */
  settledBefore = Infinity;

  constructor(private held: PricingSnapshot | undefined) {}

  get snapshot(): PricingSnapshot | undefined {
    this.reads += 1;
    return this.held;
  }

  confirmedAgoMs(): number {
    return this.held ? 0 : Infinity;
  }

  /** Nothing runs in the background here (PriceBookLoader.inForeground). */
  inForeground<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  replace(snapshot: PricingSnapshot | undefined): void {
    this.held = snapshot;
  }

  check(): Promise<void> {
    return Promise.resolve();
  }

  checkPublished(): Promise<void> {
    return Promise.resolve();
  }

  loaded(): Promise<void> {
    return this.held ? Promise.resolve() : new Promise(() => undefined);
  }
}

export const RECORDED = new Date('2025-12-01T00:00:00Z');

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
export function record(spec: RecordSpec): PriceRecord {
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

/** storage.gp1 at `amount` per 730 GiB-hours, the product most of these tests price. */
export function gp1Priced(
  amount: string,
  window: { readonly org?: string; readonly from: string; readonly until?: string },
): PriceRecord {
  return record({ key: 'storage.gp1', unit: 'gib_hours', count: 730, amount, ...window });
}

export function snapshotOf(
  records: readonly PriceRecord[],
  availability: Record<string, boolean> = {},
): Promise<PricingSnapshot> {
  return PricingSnapshot.build(
    {
      records,
      availability: new Map(Object.entries(availability)),
      // Each list price was set at RECORDED.
      listWrites: records.filter((r) => r.organizationId === null).map(() => RECORDED.getTime()),
      ends: new Map(),
      readAt: 0,
      marginMs: 0,
      version: '1',
      lastChangeId: '0',
      lastChangedAt: null,
    },
    Date.parse(NOW),
  );
}

export const NOW = '2026-06-15T12:00:00.000Z';

export async function serviceOf(
  records: readonly PriceRecord[],
  availability: Record<string, boolean> = {},
  now: string = NOW,
): Promise<{ service: PricingService; cache: HeldSnapshot; clock: ManualClock }> {
  const cache = new HeldSnapshot(await snapshotOf(records, availability));
  const clock = new ManualClock(new Date(now));
  const loader = cache as unknown as PriceBookLoader;
  const state = new PricingState(resolvePricingOptions({}), loader, clock);
  return {
    service: new PricingService(state, loader, new PastAnswers(state, resolvePricingOptions({}), clock, loader), clock),
    cache,
    clock,
  };
}

/** The cost of a quote, `undefined` when no price was found. */
export function costOf(quote: QuoteLookup): string | undefined {
  return quote.found ? quote.cost : undefined;
}

/** Runs `fn` and returns what it threw (fails the test when it throws nothing). */
export function thrownBy(fn: () => unknown): PricingError {
  return thrownAs(PricingError, fn);
}

// The sample-like book: gp1 on sale; st1 and io1 priced but marked not on sale (as the migration does).
export const gp1 = gp1Priced('0.0480', { from: '2026-01-01T00:00:00Z' });
export const st1 = record({
  key: 'storage.st1',
  unit: 'gib_hours',
  count: 730,
  amount: '0.0250',
  from: '2026-01-01T00:00:00Z',
});
export const io1 = record({
  key: 'storage.io1',
  unit: 'gib_hours',
  count: 730,
  amount: '0.1250',
  from: '2026-01-01T00:00:00Z',
});
export const NOT_ON_SALE = { 'storage.io1': false, 'storage.st1': false };
