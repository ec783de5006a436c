import { EMPTY } from 'rxjs';
import type { PriceBookLoader } from '../snapshot/price-book-loader';
import { PricingSnapshot } from '../snapshot/pricing-snapshot';
import { BookInMemory } from './book-in-memory';

/** What PricingService, PricingState and PastAnswers read of the loader. */
type LoaderReads = Pick<
  PriceBookLoader,
  | 'snapshot'
  | 'confirmedAgoMs'
  | 'databaseReachable'
  | 'settledBefore'
  | 'loaded'
  | 'check'
  | 'checkPublished'
  | 'feedStarts$'
  | 'inForeground'
>;

/**
 * Stands in for PriceBookLoader in PricingTestingModule: the snapshot of a price book in memory,
 * made when the module is compiled and again on each book applied after (PricingTestingBook),
 * never stale. No database, no timer: PricingService answers at its clock's instant from the
 * snapshot, which holds every instant (the public list at an instant it has not prepared is
 * rendered when asked for).
 */
export class InMemoryLoader implements LoaderReads {
  readonly databaseReachable = true;
  /** Every write is in the snapshot as soon as it is made: every change of the list is settled. */
  readonly settledBefore = Infinity;
  /** The feed's first page is prepared when first asked for. */
  readonly feedStarts$ = EMPTY;

  private constructor(
    private readonly book: BookInMemory,
    public snapshot: PricingSnapshot,
  ) {}

  /** The prices of `book` (the price book file format), as the book always was, planned at `nowMs`. */
  static async of(json: unknown, nowMs: number): Promise<InMemoryLoader> {
    const book = new BookInMemory(json, nowMs);
    return new InMemoryLoader(book, await PricingSnapshot.build(book.data(nowMs), nowMs));
  }

  /** Writes `json` at `nowMs`, as an import would, and serves the book it leaves. */
  async apply(json: unknown, nowMs: number): Promise<void> {
    this.book.apply(json, nowMs);
    this.snapshot = await PricingSnapshot.build(this.book.data(nowMs), nowMs);
  }

  /** Nothing runs in the background here. */
  inForeground<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  confirmedAgoMs(): number {
    return 0;
  }

  loaded(): Promise<void> {
    return Promise.resolve();
  }

  check(): Promise<void> {
    return Promise.resolve();
  }

  /** `PricingService.refresh()`: nothing to read, every write in effect at its instant. */
  checkPublished(): Promise<void> {
    return Promise.resolve();
  }
}
