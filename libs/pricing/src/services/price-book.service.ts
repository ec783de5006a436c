import { Injectable } from '@nestjs/common';
import { userInfo } from 'node:os';
import { PriceBookReads, type ChangesRange, type StoredBook } from '../database/price-book-reads';
import { DEFAULT_LOCK_TIMEOUT_MS, PriceBookWrites, type PriceScope } from '../database/price-book-writes';
import { PriceSnapshotReads } from '../database/price-snapshot-reads';
import { quoteValue } from '../errors/bounded-text';
import {
  ChangeLogMismatchError,
  PriceBookCommittedError,
  PriceBookRefusedError,
  type LockHolder,
} from '../errors/pricing-error';
import { formatInstant } from '../core/instant';
import { actorProblem, reasonProblem, type Author } from '../price-book/author';
import { describeImportPlan, type ImportReport } from '../price-book/describe-import';
import type { LoggedChange, PriceHistory } from '../price-book/price-history';
import { planChangesNothing, planImport, type ImportPlan } from '../price-book/plan-import';
import { planWithdrawal, type Withdrawal } from '../price-book/plan-withdrawal';
import { parsePriceBook, type PriceBook } from '../price-book/price-book';
import {
  describePlanValue,
  planChangeJson,
  planChangeOf,
  planDifference,
  type PlanChange,
} from '../price-book/reviewed-plan';
import { NO_PROGRESS, type Progress } from '../price-book/progress';
import { INITIAL_AVAILABILITY } from '../price-book/change-log-chain';
import type { PriceRecord } from '../core/price-record';
import { ListHistory } from '../core/list-history';
import { runNow } from '../core/slices';
import { renderPriceListNow } from '../rendering/price-list-response';
import { PriceBookHost } from './price-book-host';

/** What an import did (or, for a dry run, would do): the changes line by line and their counts. */
export interface ImportResult extends ImportReport {
  /** False when the book restates what is recorded; a dry run reports what would change. */
  readonly changed: boolean;
}

/** Who makes a write, and why (price-book/author.ts): recorded on its change-log rows. */
export interface WriteOptions {
  /** Default: the operating system's user name of this process. */
  readonly actor?: string;
  readonly reason?: string;
}

/**
 * A plan reviewed before it is applied (`import --dry-run --plan-out`, then `apply`; a plan file
 * as cli/plan-file.ts reads it): the write is refused, nothing written, unless it was planned no
 * later than the write's instant, the price book is still at `version` and the book makes exactly
 * `changes`, field by field. Only the instants a change names as the apply's own (AT_APPLY: an
 * entry without `valid_from`) take the write's instant; every other is the plan's as it reads.
 */
export interface ReviewedPlan {
  readonly version: string;
  /** The dry run's instant. */
  readonly plannedAt: Date;
  readonly changes: readonly PlanChange[];
}

/** How a write waits for the price book while another write holds it, and how it is stopped. */
export interface LockOptions {
  /** At most this long (default DEFAULT_LOCK_TIMEOUT_MS, a minute); then PRICE_BOOK_LOCKED, nothing written. */
  readonly lockTimeoutMs?: number;
  /** Told once, when the price book is found locked: who holds it (undefined: gone by the time it was looked up). */
  readonly onLocked?: (holder: LockHolder | undefined) => void;
  /**
   * Stops the write (an operator's Ctrl-C): until its COMMIT is sent it is rolled back, nothing
   * written, and the call throws the signal's reason; a COMMIT already sent runs to its end.
   */
  readonly signal?: AbortSignal;
}

export interface ApplyOptions extends WriteOptions, PublishOptions, LockOptions {
  /**
   * Plan only: check the book against the stored price book in one READ ONLY snapshot, at the
   * instant a write beginning now would get (pricing_next_publication_instant), and report what an
   * import would change. Nothing is written anywhere: no lock, no sequence, no row.
   */
  readonly dryRun?: boolean;
  /**
   * With `dryRun`: the database has no price book schema (none of its migrations ran: another
   * application's database). The book is planned against what a first migration makes (no prices;
   * INITIAL_AVAILABILITY), and nothing of the schema is read.
   */
  readonly withoutSchema?: boolean;
  /** Where checking and writing report their progress. */
  readonly progress?: Progress;
  /** Apply only what was reviewed. */
  readonly reviewed?: ReviewedPlan;
}

/** A change log that checks out (`verify`): its number of entries and the hash of the last. */
export interface ChainVerification {
  readonly entries: number;
  /** 64 hex digits; 64 zeros for an empty log. */
  readonly head: string;
}

export interface WithdrawalResult {
  readonly instant: Date;
  readonly version: string;
}

/**
 * Operators' changes of the price book, from code: the CLI, seeding and tests all go through
 * here. A book is the price book file's JSON (docs/price-book-cli.md); a refused one throws
 * PRICE_BOOK_REFUSED naming every entry at fault, and nothing is written.
 *
 * Each write is one workflow: take the price book lock, read what is stored, plan with the pure
 * rules of price-book/, write the plan and publish the new version, all in one transaction
 * (PriceBookWrites runs the SQL in it). Where it runs is PriceBookHost's: in PricingModule a call
 * waits for the database to be connected and migrated, and a write is in PricingService's answers
 * when it resolves; in PriceBookCliModule the DataSource is ready and no prices are held.
 */
@Injectable()
export class PriceBookService {
  constructor(
    private readonly writes: PriceBookWrites,
    private readonly reads: PriceBookReads,
    private readonly snapshotReads: PriceSnapshotReads,
    private readonly host: PriceBookHost,
  ) {}

  /**
   * Checks and applies a price book given as parsed JSON, all of it or nothing; the result lists
   * every change. With `dryRun`, the book is checked and written as an import would, then
   * rolled back: the result is what the import would do now, and nothing is kept.
   */
  apply(json: unknown, options?: ApplyOptions): Promise<ImportResult> {
    return this.applyBook(checkedBook(json), options);
  }

  /** Applies (or dry-runs) a price book already checked (parsePriceBook, readPriceBookFile). */
  async applyBook(book: PriceBook, options: ApplyOptions = {}): Promise<ImportResult> {
    const author = authorOf(options);
    await this.host.databaseReady();
    if (options.dryRun === true) return this.planBook(book, options);
    const progress = options.progress ?? NO_PROGRESS;
    let written;
    try {
      written = await this.writes.inTransaction(
        async (tx) => {
          const instant = await this.writes.begin(
            tx,
            { delayMs: options.publishInMs, takesMs: expectedWriteMs(book.prices.length) },
            lockWaitOf(options),
          );
          progress.start('checking', book.prices.length, 'entries');
          if (options.reviewed) {
            refuseIfPlannedLater(options.reviewed.plannedAt, instant);
            const version = await this.writes.version(tx);
            if (version !== options.reviewed.version) {
              throw new PriceBookRefusedError([
                `the price book moved since the plan: it was at version ${options.reviewed.version}, ` +
                  `it is at version ${version} now; plan again (import --dry-run --plan-out)`,
              ]);
            }
          }
          // Only what the book names: a change of one price reads one scope, whatever the book's size.
          const stored = await this.writes.recordsOf(tx, scopesOf(book));
          const availability = await this.writes.availability(tx);
          const priced = await this.writes.pricedProducts(tx, productsOf(book));
          const planned = planImport(
            book,
            stored,
            availability,
            instant.getTime(),
            (done) => progress.update(done),
            priced,
          );
          if ('errors' in planned) throw new PriceBookRefusedError(planned.errors);
          const { plan } = planned;
          if (options.reviewed) refuseUnlessReviewed(plan, options.reviewed);
          const changed = !planChangesNothing(plan);
          if (changed) await this.writes.writePlan(tx, plan, instant, author, progress);
          const version = changed ? await this.writes.publishChange(tx) : await this.writes.version(tx);
          return { plan, instant, version, changed };
        },
        // A book that changes nothing keeps nothing either, not even its write's instant.
        { commit: (result) => result.changed, signal: options.signal },
      );
    } finally {
      progress.stop();
    }
    const { plan, instant, version, changed } = written;
    if (changed) await this.host.afterWrite(instant);
    let changes;
    try {
      changes = describeImportPlan(plan);
    } catch (error) {
      if (changed) throw new PriceBookCommittedError(instant, version, 'describing its changes', error);
      throw error;
    }
    return reportOf(plan, { changed, dryRun: false, instant, version, changes });
  }

  /**
   * A dry run (ApplyOptions.dryRun): the book planned against the stored price book in one READ ONLY
   * snapshot, at the instant a write beginning now would get; nothing written anywhere.
   */
  private async planBook(book: PriceBook, options: ApplyOptions): Promise<ImportResult> {
    const progress = options.progress ?? NO_PROGRESS;
    const schema = options.withoutSchema !== true;
    try {
      return await this.writes.inReadOnlyTransaction(async (tx) => {
        const instant = await this.writes.nextInstant(
          tx,
          { delayMs: options.publishInMs, takesMs: expectedWriteMs(book.prices.length) },
          schema,
        );
        progress.start('checking', book.prices.length, 'entries');
        const stored: PriceRecord[] = schema ? await this.writes.recordsOf(tx, scopesOf(book)) : [];
        const availability = schema ? await this.writes.availability(tx) : new Map(INITIAL_AVAILABILITY);
        const version = schema ? await this.writes.version(tx) : FIRST_VERSION;
        const priced = schema ? await this.writes.pricedProducts(tx, productsOf(book)) : new Set<string>();
        const planned = planImport(
          book,
          stored,
          availability,
          instant.getTime(),
          (done) => progress.update(done),
          priced,
        );
        if ('errors' in planned) throw new PriceBookRefusedError(planned.errors);
        const { plan } = planned;
        const changed = !planChangesNothing(plan);
        return reportOf(plan, { changed, dryRun: true, instant, version, changes: describeImportPlan(plan) });
      }, options.signal);
    } finally {
      progress.stop();
    }
  }

  /** Applies a price book only when nothing was ever priced; `undefined` when prices exist. */
  async applyIfEmpty(json: unknown, options: WriteOptions = {}): Promise<ImportResult | undefined> {
    const book = checkedBook(json);
    // Refused whatever the database holds: a bad author must not pass until the first empty one.
    authorOf(options);
    await this.host.databaseReady();
    return (await this.writes.isEmpty()) ? this.applyBook(book, options) : undefined;
  }

  /**
   * The change log of every key and scope with its instant in [since, until) (epoch ms, either
   * open), of `productKey` only when given, the `last` of them only when given, oldest first, a page
   * at a time, each change with who made it and why, and what its write did (`effect`: the records
   * as the write left them).
   */
  async changes(range: ChangesRange, consume: (page: readonly LoggedChange[]) => void | Promise<void>): Promise<void> {
    await this.host.databaseReady();
    await this.reads.changes(range, consume);
  }

  /**
   * Checks the change log (`verify`): every link of its hash chain, and that the stored records and
   * availability are what it says. Resolves with the number of entries and the chain's head (64
   * hex digits: record it elsewhere, and compare it later); throws ChangeLogMismatchError naming
   * the first entry that does not match, or the first product key whose records differ.
   */
  async verify(progress: Progress = NO_PROGRESS): Promise<ChainVerification> {
    await this.host.databaseReady();
    const { entries, head, problems } = await this.reads.verify(progress);
    if (problems.length > 0) throw new ChangeLogMismatchError(problems, entries);
    return { entries, head };
  }

  /** Withdraws a scheduled price or a scheduled end, in one transaction. */
  async withdraw(
    withdrawal: Withdrawal,
    options: WriteOptions & PublishOptions & LockOptions = {},
  ): Promise<WithdrawalResult> {
    const author = authorOf(options);
    await this.host.databaseReady();
    const result = await this.writes.inTransaction(
      async (tx) => {
        const instant = await this.writes.begin(tx, { delayMs: options.publishInMs }, lockWaitOf(options));
        const stored = await this.writes.recordsOf(tx, [withdrawal]);
        const planned = planWithdrawal(withdrawal, stored, instant.getTime());
        if ('error' in planned) throw new PriceBookRefusedError([planned.error]);
        await this.writes.writeWithdrawal(tx, withdrawal, planned.plan, instant, author);
        return { instant, version: await this.writes.publishChange(tx) };
      },
      { signal: options.signal },
    );
    await this.host.afterWrite(result.instant);
    return result;
  }

  /** Every record of one key and scope (`organizationId` null: list prices), with the change log. */
  async history(productKey: string, organizationId: string | null): Promise<PriceHistory> {
    await this.host.databaseReady();
    return this.reads.history(productKey, organizationId);
  }

  /**
   * The whole price book, history included: every record and the availability of products, in one
   * snapshot (what `export` prints in the book format: cli/format-price-book.ts).
   */
  async book(): Promise<StoredBook> {
    await this.host.databaseReady();
    return this.reads.readBook();
  }

  /** The availability of products (a product not listed is on sale once it has a list price). */
  async availability(): Promise<ReadonlyMap<string, boolean>> {
    await this.host.databaseReady();
    return this.reads.availability();
  }

  /** The body `GET /v1/pricing` serves at `instant`, read from the database now. */
  async priceListAt(instant: Date): Promise<Buffer> {
    await this.host.databaseReady();
    const data = await this.snapshotReads.loadPricingData({ listOnly: true });
    const history = runNow(
      ListHistory.build(
        {
          records: data.records,
          ends: data.ends,
          writes: data.listWrites,
          lastChangeId: Number(data.lastChangeId),
        },
        { hashed: false },
      ), // the list alone: no feed served from it
    );
    return renderPriceListNow(history.listAt(instant.getTime())).body;
  }
}

/** When a write takes effect (docs/decisions.md, "One clock"). */
export interface PublishOptions {
  /**
   * Its publication instant, this long after the write begins; default: the database's default delay
   * plus expectedWriteMs of its size. The write must be ready to commit well before then, or it is
   * refused whole (PUBLICATION_MISSED).
   */
  readonly publishInMs?: number;
}

/**
 * How long checking and writing a book of `entries` prices may take, added to the database's default
 * publication delay when none is given: an import writes about ten thousand prices a second on a
 * quiet machine (docs/benchmarks.md): ten times that, so that a busy one still commits it in time.
 */
export function expectedWriteMs(entries: number): number {
  return Math.ceil(entries * 1);
}

/** The price book's version in a database just migrated: what a dry run without the schema plans against. */
const FIRST_VERSION = '1';

/** How a write waits for the price book's lock (LockOptions). */
function lockWaitOf(options: LockOptions): { timeoutMs: number; onLocked?: LockOptions['onLocked'] } {
  return { timeoutMs: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS, onLocked: options.onLocked };
}

/** What an import did (or a dry run would do): its counts from the plan. */
function reportOf(
  plan: ImportPlan,
  run: Pick<ImportResult, 'changed' | 'dryRun' | 'instant' | 'version' | 'changes'>,
): ImportResult {
  return {
    ...run,
    inserted: plan.inserts.length,
    ended: plan.ends.length,
    availabilityChanged: plan.availability.length,
    unchanged: plan.unchanged,
  };
}

/** Who writes (the process's user when not given) and why, checked as the change log checks them. */
function authorOf(options: WriteOptions): Author {
  const actor = options.actor ?? processUser();
  if (actor === undefined) {
    throw new PriceBookRefusedError(['author: no actor was given, and the user of this process has no name']);
  }
  const reason = options.reason ?? null;
  const problems = [actorProblem(actor), reason === null ? undefined : reasonProblem(reason)];
  const refused = problems.filter((problem): problem is string => problem !== undefined);
  if (refused.length > 0) throw new PriceBookRefusedError(refused.map((problem) => `author: ${problem}`));
  return { actor, reason };
}

/** The operating system's name of this process's user; `undefined` for a uid with no name (some containers). */
export function processUser(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}

/**
 * Refuses a plan made after the write's instant: a dry run plans before its apply, on the same
 * database's clock, so its `planned_at` was edited (to make a change read as scheduled), or the
 * clock went back.
 */
function refuseIfPlannedLater(plannedAt: Date, instant: Date): void {
  if (plannedAt.getTime() <= instant.getTime()) return;
  throw new PriceBookRefusedError([
    `the plan says it was made at ${formatInstant(plannedAt)}, later than this apply's instant ` +
      `${formatInstant(instant)}: a plan is made before it is applied; plan again (import --dry-run --plan-out)`,
  ]);
}

/**
 * Refuses a plan that is not the reviewed one: the changes the book makes now, with the instants
 * that are the write's own as AT_APPLY, against the plan's, field by field (reviewed-plan.ts).
 */
function refuseUnlessReviewed(plan: ImportPlan, reviewed: ReviewedPlan): void {
  const now = describeImportPlan(plan).map(planChangeOf);
  const then = reviewed.changes;
  const differing = planDifference(then, now);
  if (differing === undefined) return;
  const at = differing.index;
  const field =
    differing.field === undefined
      ? ''
      : `; change ${at + 1}'s ${differing.field} is ${describePlanValue(differing.planned)} in the plan, ` +
        `${describePlanValue(differing.now)} by the book`;
  throw new PriceBookRefusedError([
    `the changes the book would make now differ from the plan's, from change ${at + 1} on: the plan has ` +
      `${then.length} (${quoteChange(then[at])}), the book would now make ${now.length} ` +
      `(${quoteChange(now[at])})${field}; plan again (import --dry-run --plan-out)`,
  ]);
}

function quoteChange(change: PlanChange | undefined): string {
  return change === undefined ? 'none' : quoteValue(JSON.stringify(planChangeJson(change)));
}

/** The product keys of a book's availability entries. */
function productsOf(book: PriceBook): string[] {
  return book.products.map((product) => product.productKey);
}

/** The product keys and scopes a book's prices name, each once. */
function scopesOf(book: PriceBook): PriceScope[] {
  const scopes = new Map<string, PriceScope>();
  for (const { productKey, organizationId } of book.prices) {
    scopes.set(`${organizationId ?? ''}\u0000${productKey}`, { productKey, organizationId });
  }
  return [...scopes.values()];
}

function checkedBook(json: unknown): PriceBook {
  const parsed = parsePriceBook(json);
  if ('errors' in parsed) throw new PriceBookRefusedError(parsed.errors);
  return parsed.book;
}
