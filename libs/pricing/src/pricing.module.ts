import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { Clock, SystemClock } from '@app/clock';
import { PriceBookRepository } from './database/price-book.repository';
import { PriceListRateLimiter, PriceListRateLimitGuard } from './http/price-list-rate-limit';
import { PricingController } from './http/pricing.controller';
import { PricingMetrics } from './metrics/pricing-metrics';
import { PriceBookService } from './price-book/price-book.service';
import {
  ASYNC_OPTIONS_TYPE,
  ConfigurableModuleClass,
  OPTIONS_TYPE,
  PRICING_MODULE_OPTIONS,
  PRICING_OPTIONS,
  resolvePricingOptions,
} from './pricing.options';
import { PricingService } from './pricing.service';
import { PriceBookCache } from './snapshot/price-book-cache';
import { PriceBookListener } from './snapshot/price-book-listener';

const PROVIDERS: Provider[] = [
  { provide: PRICING_OPTIONS, inject: [PRICING_MODULE_OPTIONS], useFactory: resolvePricingOptions },
  { provide: Clock, useClass: SystemClock },
  PriceBookRepository,
  PriceBookCache,
  PriceBookListener,
  PriceListRateLimiter,
  PriceListRateLimitGuard,
  PricingService,
  PriceBookService,
  PricingMetrics,
];

/**
 * Pricing for the control plane: prices in memory, kept current; PricingService (the
 * availability guard, lookups, quotes, usage costs) and PriceBookService (price book changes
 * from code); and `GET /v1/pricing` (PricingController), served by any host that serves HTTP.
 * PricingMetrics holds its Prometheus metrics in a registry the host may expose.
 *
 * `PricingModule.forRoot(options?)` or `forRootAsync({ inject, useFactory })` once, in the root
 * module: global, so feature modules use PricingService without importing anything (importing
 * the class `PricingModule` itself is harmless). Needs `DatabaseModule` from `@app/database`
 * (see PricingModuleOptions).
 */
@Module({})
export class PricingModule extends ConfigurableModuleClass {
  static override forRoot(options: typeof OPTIONS_TYPE = {}): DynamicModule {
    return withPricing(super.forRoot(options));
  }

  static override forRootAsync(options: typeof ASYNC_OPTIONS_TYPE): DynamicModule {
    return withPricing(super.forRootAsync(options));
  }
}

function withPricing(module: DynamicModule): DynamicModule {
  return {
    ...module,
    controllers: [PricingController],
    providers: [...(module.providers ?? []), ...PROVIDERS],
    exports: [PricingService, PriceBookService, PricingMetrics],
  };
}
