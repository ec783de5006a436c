import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { Clock, SystemClock } from './clock';
import { PriceListMiddleware } from './http/price-list.middleware';
import { ConfigurableModuleClass } from './pricing.options';
import { PricingService } from './pricing.service';
import { PriceBookCache } from './snapshot/price-book-cache';
import { PriceBookListener } from './snapshot/price-book-listener';

/** The public price list route: exact path, every method (others are answered 405). */
export const PRICE_LIST_PATH = 'v1/pricing';

@Module({
  providers: [
    { provide: Clock, useClass: SystemClock },
    PriceBookCache,
    PriceBookListener,
    PriceListMiddleware,
    PricingService,
  ],
  exports: [PricingService, PriceBookCache, Clock],
})
export class PricingModule extends ConfigurableModuleClass implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(PriceListMiddleware).forRoutes({ path: PRICE_LIST_PATH, method: RequestMethod.ALL });
  }
}
