import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { Clock, ManualClock } from '@app/clock';
import { PRICING_OPTIONS, resolvePricingOptions } from '../options/pricing-options';
import { PricingService } from '../services/pricing.service';
import { PastAnswers } from '../snapshot/past-answers';
import { PriceBookLoader } from '../snapshot/price-book-loader';
import { PricingState } from '../snapshot/pricing-state';
import { InMemoryLoader } from './in-memory-loader';
import type { PriceEntry } from './price-book-entries';

/** A price book in the file format (docs/price-book-cli.md), e.g. entries from listPrice and organizationPrice. */
export interface PriceBookJson {
  readonly products?: readonly { readonly product_key: string; readonly on_sale: boolean }[];
  readonly prices?: readonly PriceEntry[];
}

export interface PricingTestingOptions {
  /**
   * The prices, as an empty, migrated book would hold them once imported at the clock's instant when
   * the module is compiled: the same checks (a refused book fails the compile with
   * PRICE_BOOK_REFUSED), an entry without `valid_from` starts then, and `storage.io1` and
   * `storage.st1` are not on sale unless `products` says so. The book as it always was: recorded
   * before any instant, so that moving the clock back finds it too. Default: no prices.
   */
  readonly book?: PriceBookJson;
  /**
   * The clock PricingService answers by (`at` defaults to its instant). Default: a ManualClock
   * standing at the instant forRoot was called. `overrideProvider(Clock)` replaces it too.
   */
  readonly clock?: Clock;
}

/**
 * Pricing in memory, for unit specs of code that uses PricingService: no database, no timer, no
 * global setup. The real PricingService and PricingState, with the loader replaced by one that
 * holds the prices of `book`; global like PricingModule, so feature modules inject PricingService
 * (and Clock) without importing anything:
 *
 *   Test.createTestingModule({ imports: [PricingTestingModule.forRoot({ book, clock }), BillingModule] })
 *
 * Move the clock to answer at another instant; change the prices with PricingTestingBook (a write
 * at the clock's instant), and the book as recorded before the change (`asRecordedAt`) is the one
 * before it, as in the database.
 */
@Module({})
export class PricingTestingModule {
  static forRoot(options: PricingTestingOptions = {}): DynamicModule {
    const book = options.book ?? {};
    return {
      module: PricingTestingModule,
      global: true,
      providers: [
        { provide: PRICING_OPTIONS, useValue: resolvePricingOptions({}) },
        { provide: Clock, useValue: options.clock ?? new ManualClock(new Date()) },
        {
          provide: InMemoryLoader,
          inject: [Clock],
          useFactory: (clock: Clock) => InMemoryLoader.of(book, clock.nowMs()),
        },
        { provide: PriceBookLoader, useExisting: InMemoryLoader },
        PricingState,
        PastAnswers,
        PricingService,
        PricingTestingBook,
      ],
      exports: [PricingService, Clock, PricingTestingBook],
    };
  }
}

/**
 * The price book of PricingTestingModule, to change after the compile: `apply` writes a book (the
 * file format) at the clock's instant, as `npm run pricing -- import` would (a refused one throws
 * PRICE_BOOK_REFUSED and changes nothing); PricingService answers from the book it leaves at once
 * (a write in memory takes effect at its instant, with no publication delay).
 */
@Injectable()
export class PricingTestingBook {
  constructor(
    private readonly loader: InMemoryLoader,
    private readonly clock: Clock,
  ) {}

  /** Writes `book` at the clock's instant (not before a write applied earlier). */
  apply(book: PriceBookJson): Promise<void> {
    return this.loader.apply(book, this.clock.nowMs());
  }
}
