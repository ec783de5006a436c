// The public surface of the pricing library. Apps import from `@app/pricing` only.
export { PricingModule } from './pricing.module';
export { servePriceList, PRICE_LIST_PATH } from './http/serve-price-list';
export type { PricingModuleOptions } from './pricing.options';
export { PricingService } from './pricing.service';
export { PriceBookCache } from './snapshot/price-book-cache';
export { Clock, SystemClock } from './clock';
export type { Price, PriceLookup, PriceQuery, Quote } from './pricing.types';
export type { Quantity } from './price-list/quote';
export type { PriceListDocument, PriceListEntry, PriceListFamily } from './price-list/build-price-list';
export type { UnitType, StorageClass } from './catalogue/catalogue';
export { STORAGE_CLASSES } from './catalogue/catalogue';
export {
  PricingError,
  PricingErrorCode,
  ProductUnavailableError,
  UnknownProductError,
  PricingUnavailableError,
  PriceBookRefusedError,
} from './errors/pricing-error';
// Price book operations, for the CLI and the embedded default's sample load.
export { parsePriceBook, type PriceBook } from './price-book/price-book';
export {
  applyPriceBook,
  withdrawScheduled,
  exportPriceBook,
  priceBookIsEmpty,
  loadPricingData,
  type ImportResult,
} from './database/price-book.store';
export type { Withdrawal } from './price-book/plan-withdrawal';
export { renderPriceList } from './http/price-list-response';
export { PricingSnapshot } from './snapshot/pricing-snapshot';
export { parseInstant } from './price-list/instant';
export { pricingMigrations } from './migrations';
