// The public surface of the pricing library: the module, its two services, its errors and the
// types of their answers. Apps, other libraries and e2e tests import from `@app/pricing`; the price
// book CLI from `@app/pricing/cli`, the migrations from `@app/pricing/migrations`, test support
// from `@app/pricing/testing`.
export { PricingModule } from './pricing.module';
export type { CheckpointSigning, PricingModuleOptions, TrustProxy } from './options/pricing-options';
export { PricingService } from './services/pricing.service';
export { PriceBookService, type ImportResult } from './services/price-book.service';
export { PricingMetrics } from './metrics/pricing-metrics';
export { PRICE_LIST_PATH } from './http/pricing.controller';
export { RETRY_AFTER_UNAVAILABLE_S } from './rendering/price-list-response';

// A host's own JSON answered as the list is (the host's `/openapi.json`): prepared once (a weak
// ETag, gzip and brotli, off the event loop), then 200, 304 or 412 per request with the coding
// Accept-Encoding prefers (docs/decisions.md, "ETag and conditional requests", "Compression").
export { prepareAnswers, type PreparedAnswers, type PlainResponse } from './rendering/price-list-response';
export { answerPriceListRequest as answerPreparedRequest } from './http/answer-price-list-request';

// Errors: every one is a PricingError; branch on its `code` (docs/using-pricing.md, "Errors"), and
// map it to an HTTP status with PRICING_ERROR_STATUS.
export {
  PricingError,
  PricingErrorCode,
  PRICING_ERROR_STATUS,
  ProductUnavailableError,
  UnknownProductError,
  PricingUnavailableError,
  InvalidUsageError,
  PriceBookRefusedError,
  PublicationMissedError,
  PriceBookWriteDeniedError,
  RateLimitedError,
  PriceBookCommittedError,
  PriceBookCommitUnknownError,
  ChangeLogMismatchError,
  PriceBookLockedError,
  type LockHolder,
} from './errors/pricing-error';
export { PriceBookFileError } from './cli/price-book-file';
export { PriceBookUsageError } from './cli/command-line';

// What PricingService answers, and takes.
export type {
  AsRecorded,
  Price,
  PriceLookup,
  PriceQuery,
  QuoteLookup,
  RecordedQuery,
  UsageQuery,
  UsageCost,
} from './services/pricing.types';
export type { TimeUsage, MeteredEvent } from './core/usage';
export { roundForInvoice, sumCosts } from './core/usage';
export type {
  FocusBilling,
  FocusColumn,
  FocusCost,
  FocusRow,
  FocusUnpriced,
  FocusUsage,
  MeteredEvents,
  MeteredPeriod,
} from './core/focus';
export { FOCUS_COLUMNS, focusCsv, focusCsvHeader, focusCsvRecord } from './core/focus';
export type { PriceListDocument } from './core/price-list';

// The catalogue of section 2.4.
export type { UnitType, StorageClass } from './catalogue/catalogue';
export { STORAGE_CLASSES, PRODUCT_FAMILIES, parseProductKey } from './catalogue/catalogue';
