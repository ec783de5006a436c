// The public surface of the pricing library. Apps, other libraries and e2e tests import from
// `@app/pricing` only (test support: `@app/pricing/testing`).
export { PricingModule } from './pricing.module';
export type { PricingModuleOptions, TrustProxy } from './options/pricing-options';
export { PricingService } from './services/pricing.service';
export { PriceBookService } from './services/price-book.service';
export { PriceBookCliModule, withPriceBook } from './cli/price-book-cli.module';
export { PricingController, PRICE_LIST_PATH } from './http/pricing.controller';
export { PricingMetrics } from './metrics/pricing-metrics';
export { pricingMigrations, PRICING_RUNTIME_GRANTS } from './database/migrations';

// Errors.
export {
  PricingError,
  PricingErrorCode,
  ProductUnavailableError,
  UnknownProductError,
  PricingUnavailableError,
  PriceBookRefusedError,
  PriceBookCommittedError,
  PriceBookCommitUnknownError,
  RateLimitedError,
  ChangeLogMismatchError,
} from './errors/pricing-error';
export { PriceBookFileError } from './cli/price-book-file';
export { PriceBookUsageError } from './cli/price-book-command';

// Public types.
export type {
  Price,
  PriceLookup,
  PriceQuery,
  Quote,
  QuoteLookup,
  UsageQuery,
  UsageCost,
  PricedUsage,
  UnpricedUsage,
} from './services/pricing.types';
export type { PricingHealth } from './snapshot/pricing-state';
export type { TimeUsage, MeteredEvent } from './core/usage';
export { roundForInvoice, sumCosts } from './core/usage';
export { Exact as ExactDecimal, COST_DECIMAL_PLACES } from './core/quote';
export { InvalidUsageError } from './errors/pricing-error';
export type {
  ApplyOptions,
  ChainVerification,
  ImportResult,
  WithdrawalResult,
  WriteOptions,
} from './services/price-book.service';
export type { ImportChange, ImportReport, PriceTerms } from './price-book/describe-import';
export type { PriceChange, PriceChangeKind, PriceHistory, RecordStatus } from './price-book/format-history';
export type { Withdrawal } from './price-book/plan-withdrawal';
export type { Quantity } from './core/quote';
export type { PriceListDocument, PriceListEntry, PriceListFamily } from './core/price-list';

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
export { DEFAULT_PRICE_BOOK_MAX_BYTES, readPriceBookFile, type ReadPriceBookOptions } from './cli/price-book-file';
export { parsePriceBook, type PriceBook } from './price-book/price-book';
export { terminalProgress, type ProgressStream } from './cli/terminal-progress';
export { NO_PROGRESS, type Progress } from './price-book/progress';
export { RETRY_AFTER_UNAVAILABLE_S } from './rendering/price-list-response';
