import { Module } from '@nestjs/common';
import { Clock, SystemClock } from './clock';
import { PriceListHandler } from './http/price-list.handler';
import { ConfigurableModuleClass } from './pricing.options';
import { PricingService } from './pricing.service';
import { PriceBookCache } from './snapshot/price-book-cache';
import { PriceBookListener } from './snapshot/price-book-listener';

/**
 * Prices in memory, the availability guard and lookups (PricingService), and the public price
 * list, which the host app mounts with `servePriceList(app)`.
 */
@Module({
  providers: [
    { provide: Clock, useClass: SystemClock },
    PriceBookCache,
    PriceBookListener,
    PriceListHandler,
    PricingService,
  ],
  exports: [PricingService, Clock],
})
export class PricingModule extends ConfigurableModuleClass {}
