import { Module, type DynamicModule } from '@nestjs/common';
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
   * The prices, imported into an empty, migrated book at the clock's instant when the module is
   * compiled: the same checks (a refused book fails the compile with PRICE_BOOK_REFUSED), an entry
   * without `valid_from` starts then, and `storage.io1` and `storage.st1` are not on sale unless
   * `products` says so. Default: no prices.
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
 * Prices never change after the compile; move the clock to answer at another instant.
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
          provide: PriceBookLoader,
          inject: [Clock],
          useFactory: (clock: Clock) => InMemoryLoader.of(book, clock.nowMs()),
        },
        PricingState,
        PastAnswers,
        PricingService,
      ],
      exports: [PricingService, Clock],
    };
  }
}
