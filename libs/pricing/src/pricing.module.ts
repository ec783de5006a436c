import { ConfigurableModuleBuilder, Module, type DynamicModule, type Provider } from '@nestjs/common';
import { Clock, SystemClock } from '@app/clock';
import { PriceBookReads } from './database/price-book-reads';
import { PriceBookWrites } from './database/price-book-writes';
import { PriceSnapshotReads } from './database/price-snapshot-reads';
import { PriceListAnswerCounts } from './http/price-list-answer-counts';
import { PriceListRateLimiter, PriceListRateLimitGuard } from './http/price-list-rate-limit';
import { PricingController } from './http/pricing.controller';
import { PricingMetrics } from './metrics/pricing-metrics';
import { PriceBookService } from './services/price-book.service';
import { PriceBookHost } from './services/price-book-host';
import { PricingModuleHost } from './services/pricing-module-host';
import { PRICING_OPTIONS, resolvePricingOptions, type PricingModuleOptions } from './options/pricing-options';
import { PricingService } from './services/pricing.service';
import { CheckpointAnswers } from './snapshot/checkpoint-answers';
import { PastAnswers } from './snapshot/past-answers';
import { PriceBookLoader } from './snapshot/price-book-loader';
import { PriceBookListener } from './snapshot/price-book-listener';
import { PricingState } from './snapshot/pricing-state';

export const {
  ConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: PRICING_MODULE_OPTIONS,
  OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PricingModuleOptions>()
  .setClassMethodName('forRoot')
  // Global by default: every module of the host may ask pricing without importing it again.
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

const PROVIDERS: Provider[] = [
  { provide: PRICING_OPTIONS, inject: [PRICING_MODULE_OPTIONS], useFactory: resolvePricingOptions },
  { provide: Clock, useClass: SystemClock },
  PriceSnapshotReads,
  PriceBookWrites,
  PriceBookReads,
  PriceBookLoader,
  PricingState,
  PastAnswers,
  CheckpointAnswers,
  PriceBookListener,
  PriceListAnswerCounts,
  PriceListRateLimiter,
  PriceListRateLimitGuard,
  PricingService,
  { provide: PriceBookHost, useClass: PricingModuleHost },
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
