import { CodedError } from '@app/errors';
import { listProblems, MAX_LISTED_PROBLEMS } from './bounded-text';

/** Codes of the errors the pricing library raises; the host app maps them to HTTP statuses. */
export enum PricingErrorCode {
  /**
   * The product is priced but not on sale, or has no current list price (docs/price-list-api.md,
   * section 1, rule 4).
   */
  ProductUnavailable = 'PRODUCT_UNAVAILABLE',
  /** The product key fits no family of section 2.4. */
  UnknownProduct = 'UNKNOWN_PRODUCT',
  /** No price list can be served: prices were never loaded, or are too stale. */
  PricingUnavailable = 'PRICING_UNAVAILABLE',
  /**
   * `priceListAsOf` was asked for the list at an instant later than now: the list of the future
   * is not known yet (`GET /v1/pricing/at/{instant}` answers such an instant 404 itself).
   */
  FutureInstant = 'FUTURE_INSTANT',
  /** A quantity given to a quote is not a non-negative decimal. */
  InvalidQuantity = 'INVALID_QUANTITY',
  /** A cost given to `sumCosts` or `roundForInvoice` is not a plain non-negative decimal string. */
  InvalidCost = 'INVALID_COST',
  /** Usage given to usage pricing cannot be priced as given (see InvalidUsageError). */
  InvalidUsage = 'INVALID_USAGE',
  /** A price book or withdrawal was refused; nothing was written. */
  PriceBookRefused = 'PRICE_BOOK_REFUSED',
  /** Too many requests of the public price list from one client address (section 7). */
  RateLimited = 'RATE_LIMITED',
  /** A price book write committed, then something failed (describing or printing it): the change is in force. */
  PriceBookCommitted = 'PRICE_BOOK_COMMITTED',
  /** The connection failed while a price book write committed: the change may or may not be in force. */
  PriceBookCommitUnknown = 'PRICE_BOOK_COMMIT_UNKNOWN',
  /** A price book or plan file that cannot be read or written, is not JSON, or breaks its format; nothing was written. */
  PriceBookFile = 'PRICE_BOOK_FILE',
  /** A price book command line that is wrong (the CLI's usage error); nothing was read or written. */
  PriceBookUsage = 'PRICE_BOOK_USAGE',
  /**
   * `verify`: an entry of the change log does not match its hash chain, or the stored book differs
   * from what the log says: someone changed the database outside the price book.
   */
  ChangeLogMismatch = 'CHANGE_LOG_MISMATCH',
}

export class PricingError extends CodedError<PricingErrorCode> {}

/**
 * The HTTP status of every code, for a host's exception filter (the control plane's uses it:
 * apps/control-plane/src/errors/api-exception.filter.ts). A caller's mistake is 400, a product that
 * cannot be ordered 409, prices not loaded 503 (with `Retry-After`), a list of the future 404 (it
 * does not exist yet), and the errors of the price book's workflows that mean the server or its
 * database failed 500. Plain numbers: this layer imports no framework.
 */
export const PRICING_ERROR_STATUS: Readonly<Record<PricingErrorCode, number>> = Object.freeze({
  [PricingErrorCode.ProductUnavailable]: 409,
  [PricingErrorCode.UnknownProduct]: 400,
  [PricingErrorCode.PricingUnavailable]: 503,
  [PricingErrorCode.FutureInstant]: 404,
  [PricingErrorCode.InvalidQuantity]: 400,
  [PricingErrorCode.InvalidCost]: 400,
  [PricingErrorCode.InvalidUsage]: 400,
  [PricingErrorCode.PriceBookRefused]: 400,
  [PricingErrorCode.RateLimited]: 429,
  // A write that committed, or may have, and then failed is the server's failure; its message says what is known.
  [PricingErrorCode.PriceBookCommitted]: 500,
  [PricingErrorCode.PriceBookCommitUnknown]: 500,
  [PricingErrorCode.PriceBookFile]: 400,
  [PricingErrorCode.PriceBookUsage]: 400,
  // `verify`: the database was changed outside the price book.
  [PricingErrorCode.ChangeLogMismatch]: 500,
});

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

/**
 * A price book, or a withdrawal, that was refused: every problem in `problems`, each naming its
 * entry; the message and details list the first MAX_LISTED_PROBLEMS (bounded-text.ts).
 */
export class PriceBookRefusedError extends PricingError {
  constructor(readonly problems: readonly string[]) {
    const omitted = Math.max(0, problems.length - MAX_LISTED_PROBLEMS);
    super(PricingErrorCode.PriceBookRefused, `refused, nothing was written:\n  ${listProblems(problems)}`, {
      problems: problems.slice(0, MAX_LISTED_PROBLEMS),
      ...(omitted > 0 ? { omitted_problems: omitted } : {}),
    });
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

/**
 * A write that committed, after which something failed (describing or printing what it did): its
 * change is recorded and served. The message says so, with the write's instant and version, and
 * what failed: never "nothing was written".
 */
export class PriceBookCommittedError extends PricingError {
  constructor(
    readonly instant: Date,
    readonly version: string,
    what: string,
    override readonly cause: unknown,
  ) {
    super(
      PricingErrorCode.PriceBookCommitted,
      `applied at ${instant.toISOString()} (version ${version}): the change was committed and is in force, ` +
        `but ${what} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      { instant: instant.toISOString(), version },
    );
  }
}

/**
 * The connection failed while a write was committing: PostgreSQL may have committed it or not,
 * and this process cannot tell. The message says so, never "nothing was written": the operator
 * looks (history, export, the version) before writing again.
 */
export class PriceBookCommitUnknownError extends PricingError {
  constructor(override readonly cause: unknown) {
    super(
      PricingErrorCode.PriceBookCommitUnknown,
      `the connection to the database failed while the change was being committed, so it may or may not be ` +
        `in force (${cause instanceof Error ? cause.message : String(cause)}); look with history or export ` +
        `before writing it again`,
    );
  }
}

/**
 * The change log does not prove the book (`verify`): `problem` names the first entry whose hash
 * does not match (or that does not fit the entries before it), or the first product key whose
 * stored records or availability differ from the log's, and what differs.
 */
export class ChangeLogMismatchError extends PricingError {
  constructor(
    readonly problem: string,
    readonly entries: number,
  ) {
    super(PricingErrorCode.ChangeLogMismatch, `the change log does not prove the book: ${problem}`, {
      problem,
      entries_checked: entries,
    });
  }
}
