import { CodedError } from '@app/errors';
import { listProblems, MAX_LISTED_PROBLEMS, quoteValue } from './bounded-text';

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
   * `priceListAsOf` was asked for the list at an instant later than now, or a read for the book as
   * recorded at such an instant (`asRecordedAt`): the future is not known yet (`GET
   * /v1/pricing/at/{instant}` answers such an instant 404 itself).
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
   * A price book write could not commit early enough before its publication instant (a write longer
   * than its delay, or one held open): nothing was written.
   */
  PublicationMissed = 'PUBLICATION_MISSED',
  /**
   * The database refused this process's role the price book's writes (a member of `pricing_reader`,
   * not `pricing_writer`): nothing was written.
   */
  PriceBookWriteDenied = 'PRICE_BOOK_WRITE_DENIED',
  /**
   * `verify`: an entry of the change log does not match its hash chain, or the stored book differs
   * from what the log says: someone changed the database outside the price book.
   */
  ChangeLogMismatch = 'CHANGE_LOG_MISMATCH',
  /**
   * Another writer held the price book's lock longer than the write would wait (its lock timeout,
   * the CLI's `--lock-timeout`): nothing was written; the message names the holder.
   */
  PriceBookLocked = 'PRICE_BOOK_LOCKED',
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
  // A write too long for its publication instant: nothing was written; again with a later one.
  [PricingErrorCode.PublicationMissed]: 409,
  // The process runs as a role that may only read: its deployment's mistake, not the caller's.
  [PricingErrorCode.PriceBookWriteDenied]: 500,
  [PricingErrorCode.RateLimited]: 429,
  // A write that committed, or may have, and then failed is the server's failure; its message says what is known.
  [PricingErrorCode.PriceBookCommitted]: 500,
  [PricingErrorCode.PriceBookCommitUnknown]: 500,
  [PricingErrorCode.PriceBookFile]: 400,
  [PricingErrorCode.PriceBookUsage]: 400,
  // `verify`: the database was changed outside the price book.
  [PricingErrorCode.ChangeLogMismatch]: 500,
  // Another write held the price book for longer than this one waits: nothing was written; again later.
  [PricingErrorCode.PriceBookLocked]: 409,
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
 * A write that could not commit at least the database's publication margin before its publication
 * instant (docs/decisions.md, "One clock"): refused whole, nothing written. A write that takes
 * longer needs a later instant (PriceBookService's `publishInMs`; the CLI's `--publish-in`).
 */
export class PublicationMissedError extends PricingError {
  constructor(
    readonly instant: Date,
    override readonly cause: unknown,
  ) {
    super(
      PricingErrorCode.PublicationMissed,
      `refused, nothing was written: the write was not ready to commit in time for its publication instant ` +
        `${instant.toISOString()} (instances need a moment to have it ready); run it again with a later ` +
        `publication instant (--publish-in SECONDS, longer than the write takes)`,
      { instant: instant.toISOString() },
    );
  }
}

/**
 * PostgreSQL refused a write of the price book for want of a privilege (42501): the process runs as
 * a role that may only read it, a member of `pricing_reader` (docs/operations.md, "Readers and
 * writers"). Nothing was written: the refusal comes at the write's first statement (its
 * publication instant), and the transaction is rolled back.
 */
export class PriceBookWriteDeniedError extends PricingError {
  constructor(override readonly cause: unknown) {
    super(
      PricingErrorCode.PriceBookWriteDenied,
      `refused, nothing was written: this process's database role may not write the price book ` +
        `(${cause instanceof Error ? cause.message : String(cause)}); writes run as a member of pricing_writer`,
    );
  }
}

/**
 * The change log does not prove the book (`verify`): `problems` name each entry whose hash does not
 * match (or that does not fit the entries before it), then the first product key whose stored
 * records or availability differ from the log's, and what differs; `problem` is the first. The
 * message and details list the first MAX_LISTED_PROBLEMS (bounded-text.ts).
 */
export class ChangeLogMismatchError extends PricingError {
  readonly problem: string;

  constructor(
    readonly problems: readonly string[],
    readonly entries: number,
  ) {
    const omitted = Math.max(0, problems.length - MAX_LISTED_PROBLEMS);
    super(
      PricingErrorCode.ChangeLogMismatch,
      `the change log does not prove the book: ${problems[0]}` +
        (problems.length > 1 ? `\n  ${listProblems(problems.slice(1))}` : ''),
      {
        problem: problems[0],
        problems: problems.slice(0, MAX_LISTED_PROBLEMS),
        ...(omitted > 0 ? { omitted_problems: omitted } : {}),
        entries_checked: entries,
      },
    );
    this.problem = problems[0];
  }
}

/**
 * The session that holds the price book's lock, as pg_stat_activity shows it in this database
 * (database/price-book-writes.ts): what a writer that waits names. Its details other than the
 * application and role are visible only to the same role or one with pg_read_all_stats: `null`
 * otherwise.
 */
export interface LockHolder {
  readonly pid: number;
  /** Its application_name (the CLI sets `pricing <command> <actor>@<host>`). */
  readonly applicationName: string | null;
  readonly role: string | null;
  /** Its client's host name or address; `null` for a local socket, or when not visible. */
  readonly client: string | null;
  /** When its transaction began: it has held the lock since then at most. */
  readonly since: Date | null;
}

/** A holder in one line: application, role, client, pid and since when; every value escaped. */
export function describeLockHolder(holder: LockHolder | undefined): string {
  if (holder === undefined) return 'another session (gone by the time it was looked up)';
  const about = [
    `pid ${holder.pid}`,
    ...(holder.role !== null ? [`role ${quoteValue(holder.role)}`] : []),
    holder.client !== null ? `client ${quoteValue(holder.client)}` : 'a local or hidden client',
    ...(holder.since !== null ? [`in a transaction since ${holder.since.toISOString()}`] : []),
  ];
  const name = holder.applicationName ? quoteValue(holder.applicationName) : 'a session without an application_name';
  return `${name} (${about.join(', ')})`;
}

/**
 * The price book stayed locked by another writer longer than this write waits (`timeoutMs`): nothing
 * was written. The message names the holder.
 */
export class PriceBookLockedError extends PricingError {
  constructor(
    readonly holder: LockHolder | undefined,
    readonly timeoutMs: number,
  ) {
    super(
      PricingErrorCode.PriceBookLocked,
      `refused, nothing was written: the price book stayed locked by ${describeLockHolder(holder)} ` +
        `for the ${timeoutMs / 1000} s this write waits (--lock-timeout); try again once it is done, or wait longer ` +
        `with --lock-timeout SECONDS`,
      {
        timeout_ms: timeoutMs,
        ...(holder
          ? {
              holder: {
                pid: holder.pid,
                application_name: holder.applicationName,
                role: holder.role,
                client: holder.client,
                since: holder.since?.toISOString() ?? null,
              },
            }
          : {}),
      },
    );
  }
}
