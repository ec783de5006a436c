// The public surface of the pricing library. Apps import from `@app/pricing` only.
export { PricingModule } from './pricing.module';
export type { PricingModuleOptions } from './pricing.options';
export { PricingService } from './pricing.service';
export { servePriceList, PRICE_LIST_PATH } from './http/serve-price-list';
export { pricingMigrations } from './migrations';
export { Clock, SystemClock } from './clock';

// Errors.
export {
  PricingError,
  PricingErrorCode,
  ProductUnavailableError,
  UnknownProductError,
  PricingUnavailableError,
  PriceBookRefusedError,
} from './errors/pricing-error';
export { PriceBookFileError } from './cli/price-book-file';
export { PriceBookUsageError } from './cli/price-book-command';

// Public types.
export type { Price, PriceLookup, PriceQuery, PricingHealth, Quote } from './pricing.types';
export type { Quantity } from './price-list/quote';
export type { PriceListDocument, PriceListEntry, PriceListFamily } from './price-list/build-price-list';
export type { UnitType, StorageClass } from './catalogue/catalogue';
export { STORAGE_CLASSES } from './catalogue/catalogue';

// The price book CLI, run by the host app's command line.
export {
  PRICE_BOOK_USAGE,
  preparePriceBookCommand,
  runPriceBookCommand,
  applyPriceBookFileIfEmpty,
  type PriceBookCommand,
} from './cli/price-book-command';
