// The public surface of the pricing library. Apps, other libraries and e2e tests import from
// `@app/pricing` only (test support: `@app/pricing/testing`).
export { PricingModule } from './pricing.module';
export type { PricingModuleOptions } from './pricing.options';
export { PricingService } from './pricing.service';
export { PriceBookService } from './price-book/price-book.service';
export { PricingController, PRICE_LIST_PATH } from './http/pricing.controller';
export { PricingMetrics } from './metrics/pricing-metrics';
export { pricingMigrations } from './migrations';

// Errors.
export {
  PricingError,
  PricingErrorCode,
  ProductUnavailableError,
  UnknownProductError,
  PricingUnavailableError,
  PriceBookRefusedError,
  RateLimitedError,
} from './errors/pricing-error';
export { PriceBookFileError } from './cli/price-book-file';
export { PriceBookUsageError } from './cli/price-book-command';

// Public types.
export type {
  Price,
  PriceLookup,
  PriceQuery,
  PricingHealth,
  Quote,
  QuoteLookup,
  UsageQuery,
  UsageCost,
  PricedUsage,
  UnpricedUsage,
} from './pricing.types';
export type { TimeUsage, MeteredEvent } from './price-list/usage';
export { sumCosts } from './price-list/usage';
export { Exact as ExactDecimal, COST_DECIMAL_PLACES } from './price-list/quote';
export { InvalidUsageError } from './errors/pricing-error';
export type { ApplyOptions, ImportResult, WithdrawalResult } from './database/price-book.repository';
export type { ImportChange, ImportReport, PriceTerms } from './price-book/describe-import';
export type { PriceChange, PriceChangeKind, PriceHistory, RecordStatus } from './price-book/format-history';
export type { Withdrawal } from './price-book/plan-withdrawal';
export type { Quantity } from './price-list/quote';
export type { PriceListDocument, PriceListEntry, PriceListFamily } from './price-list/build-price-list';

// The catalogue of section 2.4.
export type { UnitType, StorageClass, ProductFamily, ProductKeyParts, DimensionName } from './catalogue/catalogue';
export { STORAGE_CLASSES, PRODUCT_FAMILIES, UNIT_TYPES, parseProductKey } from './catalogue/catalogue';

// The price book CLI, run by the host app's command line.
export {
  PRICE_BOOK_USAGE,
  preparePriceBookCommand,
  runPriceBookCommand,
  type PriceBookCommand,
} from './cli/price-book-command';
export { readPriceBookFile } from './cli/price-book-file';
export { parsePriceBook, type PriceBook } from './price-book/price-book';
export { terminalProgress, type ProgressStream } from './cli/terminal-progress';
export { NO_PROGRESS, type Progress } from './price-book/progress';
export { RETRY_AFTER_UNAVAILABLE_S } from './http/price-list-response';
