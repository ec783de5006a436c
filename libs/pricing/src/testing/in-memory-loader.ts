import type { PriceBookLoader } from '../snapshot/price-book-loader';
import { PricingSnapshot } from '../snapshot/pricing-snapshot';
import { pricingDataOfBook } from './book-in-memory';

/** What PricingService and PricingState read of the loader. */
type LoaderReads = Pick<
  PriceBookLoader,
  'snapshot' | 'confirmedAgoMs' | 'databaseReachable' | 'settledBefore' | 'loaded' | 'check'
>;

/**
 * Stands in for PriceBookLoader in PricingTestingModule: one snapshot, made from a price book when
 * the module is compiled, never stale, never reloaded. No database, no timer: PricingService
 * answers at its clock's instant from the snapshot, which holds every instant (the public list
 * at an instant it has not prepared is rendered when asked for).
 */
export class InMemoryLoader implements LoaderReads {
  readonly databaseReachable = true;
  /** Its prices never change: every change of the list is settled. */
  readonly settledBefore = Infinity;

  private constructor(readonly snapshot: PricingSnapshot) {}

  /** The prices of `book` (the price book file format) imported into an empty book at `nowMs`. */
  static async of(book: unknown, nowMs: number): Promise<InMemoryLoader> {
    return new InMemoryLoader(await PricingSnapshot.build(pricingDataOfBook(book, nowMs), nowMs));
  }

  confirmedAgoMs(): number {
    return 0;
  }

  loaded(): Promise<void> {
    return Promise.resolve();
  }

  /** `PricingService.refresh()`: nothing to read. */
  check(): Promise<void> {
    return Promise.resolve();
  }
}
