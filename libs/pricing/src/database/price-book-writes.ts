import { Injectable } from '@nestjs/common';
import { CommitOutcomeUnknownError, inTransaction, type TransactionOptions } from '@app/database';
import { DataSource, type EntityManager } from 'typeorm';
import type { PriceRecord } from '../core/price-record';
import {
  PriceBookCommitUnknownError,
  PriceBookWriteDeniedError,
  PublicationMissedError,
} from '../errors/pricing-error';
import type { Author } from '../price-book/author';
import type { ImportPlan } from '../price-book/plan-import';
import type { Withdrawal, WithdrawalPlan } from '../price-book/plan-withdrawal';
import type { Progress } from '../price-book/progress';
import type { LoggedRecord } from '../price-book/change-log-chain';
import { appendToLog } from './change-log';
import { PUBLICATION_INSTANT, PUBLICATION_MISSED } from './migrations/1764000011000-one-clock';
import {
  inBatches,
  loggedRecordColumns,
  loggedRecordOf,
  readAvailability,
  readVersion,
  RECORD_COLUMNS,
  rows,
  toPriceRecord,
  type PriceRecordRow,
  type VersionRow,
} from './price-book-rows';
import { insertPrices, linkSuccessors, logPlan, writeAvailability, writeEnds } from './write-plan';

/** Channel of the NOTIFY that every change of the price book sends. */
export const PRICE_BOOK_CHANNEL = 'pricing_price_book_changed';
/** Advisory lock that serializes writes of the price book. */
export const PRICE_BOOK_LOCK = 4_705_212_001;

/** The SQLSTATE of a database error thrown through TypeORM or pg. */
function sqlState(error: unknown): string | undefined {
  const cause = (error as { driverError?: unknown })?.driverError ?? error;
  return (cause as { code?: unknown })?.code as string | undefined;
}

/**
 * A transaction of the price book (inTransaction): every write's statements run in the one it is
 * given, so that a workflow (services/price-book.service.ts) decides what is written together.
 */
export type PriceBookTransaction = EntityManager;

/** How long after it begins a write takes effect (PriceBookWrites.begin). */
export interface PublicationDelay {
  /** This long; within the database's bounds. */
  readonly delayMs?: number;
  /** Without `delayMs`: the database's default delay plus this, what the write is expected to take. */
  readonly takesMs?: number;
}

/** A product key and a scope: the list price (`organizationId` null) or one organization's. */
export type PriceScope = Pick<PriceRecord, 'productKey' | 'organizationId'>;

/**
 * The writes of the price book and what a write reads first, each statement in the transaction its
 * workflow gives it (services/price-book.service.ts decides what is written together, and whether
 * it is kept).
 */
@Injectable()
export class PriceBookWrites {
  /** The publication instant of each transaction begun (`begin`), for the error of a COMMIT refused for it. */
  private readonly instants = new WeakMap<PriceBookTransaction, Date>();

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Runs `work` in one transaction and commits it, or, with `commit: false` (or a `commit` that says
   * no to what it returned), rolls it back once `work` is done (a dry run, or a write that changes
   * nothing: the same statements, nothing kept, no NOTIFY sent). When `work`
   * throws, nothing is kept either; when the connection fails during the commit, nobody knows
   * (PriceBookCommitUnknownError).
   */
  inTransaction<T>(work: (tx: PriceBookTransaction) => Promise<T>, options: TransactionOptions<T> = {}): Promise<T> {
    let begun: PriceBookTransaction | undefined;
    return inTransaction(this.dataSource, (tx) => work((begun = tx)), options).catch((error: unknown) => {
      if (error instanceof CommitOutcomeUnknownError) throw new PriceBookCommitUnknownError(error.cause);
      const instant = begun && this.instants.get(begun);
      if (instant && sqlState(error) === PUBLICATION_MISSED) throw new PublicationMissedError(instant, error);
      // insufficient_privilege: a reader's role (pricing_reader), refused its first write statement.
      if (sqlState(error) === '42501') throw new PriceBookWriteDeniedError(error);
      throw error;
    });
  }

  /**
   * Takes the price book lock, which serializes every write, and returns the write's publication
   * instant, which the database gives it (docs/decisions.md, "One clock"): its clock now plus
   * `delayMs`, or its default delay plus `takesMs` (what the write is expected to take), within the
   * bounds of price_book_clock, after every earlier write's, whole milliseconds. Every record the write inserts is recorded at it, every end
   * it sets is at it or later, its change-log rows carry it, and the public list changes at it; the
   * COMMIT is refused (PublicationMissedError, nothing written) unless it comes early enough before
   * it for every instance to have its answers ready.
   */
  async begin(tx: PriceBookTransaction, { delayMs, takesMs }: PublicationDelay = {}): Promise<Date> {
    await tx.query(`SELECT pg_advisory_xact_lock($1)`, [PRICE_BOOK_LOCK]);
    const interval = (ms: number | undefined) => (ms === undefined ? null : `${Math.ceil(ms)} milliseconds`);
    const [{ instant }] = await rows<{ instant: Date }>(
      tx,
      `SELECT ${PUBLICATION_INSTANT}($1::interval, $2::interval) AS instant`,
      [interval(delayMs), interval(takesMs)],
    );
    this.instants.set(tx, instant);
    return instant;
  }

  /**
   * The stored records of the product keys and scopes named (`organizationId` null: the list
   * price), read by the scope index, BATCH scopes a statement; nothing else.
   */
  async recordsOf(tx: PriceBookTransaction, scopes: readonly PriceScope[]): Promise<PriceRecord[]> {
    const records: PriceRecord[] = [];
    const listKeys = scopes.filter((s) => s.organizationId === null).map((s) => s.productKey);
    const organizations = scopes.filter((s) => s.organizationId !== null);
    await inBatches(listKeys, async (keys) => {
      const found = await rows<PriceRecordRow>(
        tx,
        `SELECT ${RECORD_COLUMNS} FROM price_record
          WHERE product_key = ANY($1::text[]) AND organization_id IS NULL`,
        [keys],
      );
      for (const row of found) records.push(toPriceRecord(row));
    });
    await inBatches(organizations, async (batch) => {
      const found = await rows<PriceRecordRow>(
        tx,
        `SELECT ${RECORD_COLUMNS} FROM price_record
          WHERE (product_key, organization_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
        [batch.map((s) => s.productKey), batch.map((s) => s.organizationId)],
      );
      for (const row of found) records.push(toPriceRecord(row));
    });
    return records;
  }

  /** The availability of products (a product not listed is on sale). */
  availability(tx: PriceBookTransaction): Promise<Map<string, boolean>> {
    return readAvailability(tx);
  }

  /** The price book's version. */
  version(tx: PriceBookTransaction): Promise<string> {
    return readVersion(tx);
  }

  /**
   * Writes a plan: ends first, so that the prices that follow them never overlap while being
   * inserted; then the new prices, the links of each ended price to its successor, availability,
   * and the change log.
   */
  async writePlan(
    tx: PriceBookTransaction,
    plan: ImportPlan,
    instant: Date,
    author: Author,
    progress: Progress,
  ): Promise<void> {
    let done = 0;
    progress.start('writing', plan.ends.length + plan.inserts.length + plan.availability.length, 'rows');
    const written = (rowCount: number): void => progress.update((done += rowCount));
    const ended = await writeEnds(tx, plan.ends, written);
    const inserted = await insertPrices(tx, plan.inserts, instant, written);
    const links = await linkSuccessors(
      tx,
      plan,
      inserted.map((record) => Number(record.id)),
    );
    await writeAvailability(tx, plan.availability, instant, written);
    await logPlan(tx, plan, { inserted, ended, links }, author);
  }

  /**
   * Withdraws what `plan` names: a scheduled price deleted, the prices it ended reopened or
   * re-ended; one change-log row says so, with the deleted id and each record reopened or re-ended
   * as stored after.
   */
  async writeWithdrawal(
    tx: PriceBookTransaction,
    withdrawal: Withdrawal,
    plan: WithdrawalPlan,
    instant: Date,
    author: Author,
  ): Promise<void> {
    const { deleteId, reends } = plan;
    // Unlink first: the successor's own link and the records it ended point at the deleted row.
    for (const reend of reends) {
      await tx.query(`UPDATE price_record SET superseded_by = NULL WHERE id = $1`, [reend.id]);
    }
    if (deleteId !== null) await tx.query(`DELETE FROM price_record WHERE id = $1`, [deleteId]);
    const reended: LoggedRecord[] = [];
    for (const reend of reends) {
      const [row] = await rows<Record<string, unknown>>(
        tx,
        `WITH reended AS (
           UPDATE price_record SET valid_until = $2, superseded_by = $3 WHERE id = $1
           RETURNING ${loggedRecordColumns()}
         )
         SELECT * FROM reended`,
        [reend.id, reend.validUntil === null ? null : new Date(reend.validUntil), reend.supersededBy],
      );
      reended.push(loggedRecordOf(row));
    }
    const named = deleteId ?? reends[0]?.id;
    await appendToLog(
      tx,
      [
        {
          change: deleteId !== null ? 'withdraw_price' : 'withdraw_end',
          productKey: withdrawal.productKey,
          organizationId: withdrawal.organizationId,
          priceRecordId: named === undefined ? null : String(named),
          onSale: null,
          effect: {
            ...(deleteId !== null ? { deleted: String(deleteId) } : {}),
            ...(reended.length > 0 ? { ends: reended } : {}),
          },
        },
      ],
      author,
    );
  }

  /** Moves the version and notifies listening instances; the notification goes out on commit. */
  async publishChange(tx: PriceBookTransaction): Promise<string> {
    // A top-level UPDATE would come back from TypeORM as [rows, rowCount]; as a CTE it is a SELECT.
    const [{ version }] = await rows<Pick<VersionRow, 'version'>>(
      tx,
      `WITH moved AS (UPDATE price_book_version SET version = version + 1 RETURNING version)
       SELECT version::text FROM moved`,
    );
    await tx.query(`SELECT pg_notify($1, $2)`, [PRICE_BOOK_CHANNEL, version]);
    return version;
  }

  /** True when no price was ever recorded: the embedded default loads the sample book then. */
  async isEmpty(): Promise<boolean> {
    const [row] = await rows<{ empty: boolean }>(
      this.dataSource.manager,
      `SELECT NOT EXISTS (SELECT 1 FROM price_record) AND NOT EXISTS (SELECT 1 FROM price_change) AS empty`,
    );
    return row.empty;
  }
}
