/** Codes of the errors the pricing library raises; the host app maps them to HTTP statuses. */
export enum PricingErrorCode {
  /** The product is priced but not on sale, or has no current list price (rule 4). */
  ProductUnavailable = 'PRODUCT_UNAVAILABLE',
  /** The product key fits no family of section 2.4. */
  UnknownProduct = 'UNKNOWN_PRODUCT',
  /** No price list can be served: prices were never loaded, or are too stale. */
  PricingUnavailable = 'PRICING_UNAVAILABLE',
  /** A quantity given to a quote is not a non-negative decimal. */
  InvalidQuantity = 'INVALID_QUANTITY',
  /** Usage given to usage pricing cannot be priced as given (see InvalidUsageError). */
  InvalidUsage = 'INVALID_USAGE',
  /** A price book or withdrawal was refused; nothing was written. */
  PriceBookRefused = 'PRICE_BOOK_REFUSED',
  /** Too many requests of the public price list from one client address (section 7). */
  RateLimited = 'RATE_LIMITED',
}

export class PricingError extends Error {
  constructor(
    readonly code: PricingErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'PricingError';
  }
}

export class ProductUnavailableError extends PricingError {
  constructor(
    readonly productKey: string,
    reason: string,
  ) {
    super(PricingErrorCode.ProductUnavailable, `${productKey} cannot be ordered: ${reason}`, {
      product_key: productKey,
    });
  }
}

export class UnknownProductError extends PricingError {
  constructor(readonly productKey: string) {
    super(PricingErrorCode.UnknownProduct, `${productKey} is not a known product`, { product_key: productKey });
  }
}

export class PricingUnavailableError extends PricingError {
  constructor() {
    super(PricingErrorCode.PricingUnavailable, 'prices are temporarily unavailable');
  }
}

/** A price book, or a withdrawal, that was refused: every problem, each naming its entry. */
export class PriceBookRefusedError extends PricingError {
  constructor(readonly problems: readonly string[]) {
    super(PricingErrorCode.PriceBookRefused, `refused, nothing was written:\n  ${problems.join('\n  ')}`, { problems });
  }
}

/** Section 7's 429: the client waits `retryAfterS` seconds. */
export class RateLimitedError extends PricingError {
  constructor(readonly retryAfterS: number) {
    super(PricingErrorCode.RateLimited, 'too many requests from this address', { retry_after_s: retryAfterS });
  }
}

/**
 * Usage that cannot be priced as given (usage pricing): a size, quantity or byte count that is
 * not a non-negative decimal, an interval that ends before it starts, an invalid date, a size or
 * byte count missing or given where the family takes none, time-based usage of a metered family
 * or events of a time-based one. `details.field` names the input.
 */
export class InvalidUsageError extends PricingError {
  constructor(
    message: string,
    readonly field: string,
    details: Readonly<Record<string, unknown>> = {},
  ) {
    super(PricingErrorCode.InvalidUsage, message, { field, ...details });
  }
}
