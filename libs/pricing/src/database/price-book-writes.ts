import { Injectable } from '@nestjs/common';
import { CommitOutcomeUnknownError, inTransaction, type TimedClient, type TransactionOptions } from '@app/database';
import { DataSource, type EntityManager } from 'typeorm';
import type { PriceRecord } from '../core/price-record';
import {
  PriceBookCommitUnknownError,
  PriceBookLockedError,
  PriceBookWriteDeniedError,
  PublicationMissedError,
  type LockHolder,
} from '../errors/pricing-error';
import type { Author } from '../price-book/author';
import type { ImportPlan } from '../price-book/plan-import';
import type { Withdrawal, WithdrawalPlan } from '../price-book/plan-withdrawal';
import type { Progress } from '../price-book/progress';
import type { LoggedRecord } from '../price-book/change-log-chain';
import { appendToLog } from './change-log';
import {
  NEXT_PUBLICATION_INSTANT,
  PUBLICATION_INSTANT,
  PUBLICATION_MISSED,
} from './migrations/1764000011000-one-clock';
import { SCHEMA_ACTOR } from './migrations/1764000012100-initial-availability-logged';
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
/** How long a write waits for the price book while another write holds it, unless told otherwise: a minute, which a person at a terminal can live with. */
export const DEFAULT_LOCK_TIMEOUT_MS = 60_000;

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

/** How a write waits for the price book's lock while another write holds it (PriceBookWrites.begin). */
export interface LockWait {
  /** At most this long; 0: not at all. */
  readonly timeoutMs: number;
  /** Told once, when the lock is found held: who holds it. */
  readonly onLocked?: (holder: LockHolder | undefined) => void;
}

/** SQLSTATE of a lock not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';
/** The client's deadline of the wait comes this long after the database's own lock_timeout, so that its clearer error wins. */
const LOCK_WAIT_GRACE_MS = 2_000;
/** The database's default publication delay (price_book_clock.default_delay): what a dry run on a database without the schema assumes. */
const DEFAULT_DELAY_MS = 1_000;

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
   * Runs `work` in one READ ONLY transaction at REPEATABLE READ (a dry run: it plans without
   * writing anything, not even a sequence or a row of price_book_write), then ends it; `signal` as
   * inTransaction's.
   */
  inReadOnlyTransaction<T>(work: (tx: PriceBookTransaction) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return inTransaction(
      this.dataSource,
      async (tx) => {
        await tx.query(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
        return work(tx);
      },
      { commit: false, signal },
    );
  }

  /**
   * Takes the price book lock, which serializes every write, and returns the write's publication
   * instant, which the database gives it (docs/decisions.md, "One clock"): its clock now plus
   * `delayMs`, or its default delay plus `takesMs` (what the write is expected to take), within the
   * bounds of price_book_clock, after every earlier write's, whole milliseconds. Every record the write inserts is recorded at it, every end
   * it sets is at it or later, its change-log rows carry it, and the public list changes at it; the
   * COMMIT is refused (PublicationMissedError, nothing written) unless it comes early enough before
   * it for every instance to have its answers ready. While another write holds the lock, it waits
   * as `wait` says (lockBook); the instant is taken once the lock is held, so waiting costs no time
   * of the write's own.
   */
  async begin(tx: PriceBookTransaction, { delayMs, takesMs }: PublicationDelay = {}, wait?: LockWait): Promise<Date> {
    await this.lockBook(tx, wait ?? { timeoutMs: DEFAULT_LOCK_TIMEOUT_MS });
    const [{ instant }] = await rows<{ instant: Date }>(
      tx,
      `SELECT ${PUBLICATION_INSTANT}($1::interval, $2::interval) AS instant`,
      [intervalOf(delayMs), intervalOf(takesMs)],
    );
    this.instants.set(tx, instant);
    return instant;
  }

  /**
   * What the publication instant of a write beginning now would be (pricing_next_publication_instant),
   * without making it one: a dry run's instant. `schema: false`: the database has no price book
   * schema (a dry run on another application's database), so the database's clock plus the default
   * delay of a fresh schema.
   */
  async nextInstant(
    tx: PriceBookTransaction,
    { delayMs, takesMs }: PublicationDelay = {},
    schema = true,
  ): Promise<Date> {
    const sql = schema
      ? `SELECT ${NEXT_PUBLICATION_INSTANT}($1::interval, $2::interval) AS instant`
      : `SELECT date_trunc('milliseconds', t) + CASE WHEN t > date_trunc('milliseconds', t) THEN interval '1 millisecond' ELSE interval '0' END AS instant
           FROM (SELECT clock_timestamp() + coalesce($1::interval, $2::interval + interval '${DEFAULT_DELAY_MS} milliseconds') AS t) now`;
    const [{ instant }] = await rows<{ instant: Date }>(tx, sql, [intervalOf(delayMs), intervalOf(takesMs ?? 0)]);
    return instant;
  }

  /**
   * Takes the price book's advisory lock for the transaction. When another session holds it, says
   * who (`wait.onLocked`: pg_stat_activity of the holder, in this database only, as advisory locks
   * of other databases are theirs), then waits for it in the database, at most `wait.timeoutMs`
   * (lock_timeout, set for this one statement; the client's deadline and statement_timeout raised
   * above it), and throws PriceBookLockedError, nothing written, when it was not granted by then.
   */
  private async lockBook(tx: PriceBookTransaction, wait: LockWait): Promise<void> {
    const [{ locked }] = await rows<{ locked: boolean }>(tx, `SELECT pg_try_advisory_xact_lock($1) AS locked`, [
      PRICE_BOOK_LOCK,
    ]);
    if (locked) return;
    const holder = await lockHolder(tx);
    wait.onLocked?.(holder);
    if (wait.timeoutMs <= 0) throw new PriceBookLockedError(holder, 0);
    const [saved] = await rows<{ lock: string; statement: string }>(
      tx,
      `SELECT current_setting('lock_timeout') AS lock, current_setting('statement_timeout') AS statement`,
    );
    await tx.query(`SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $2, true)`, [
      `${Math.ceil(wait.timeoutMs)}ms`,
      `${Math.ceil(wait.timeoutMs) + LOCK_WAIT_GRACE_MS}ms`,
    ]);
    const client = (await tx.queryRunner?.connect()) as TimedClient | undefined;
    const deadline = client?.deadlineMs;
    if (client) client.deadlineMs = wait.timeoutMs + 2 * LOCK_WAIT_GRACE_MS;
    try {
      await tx.query(`SELECT pg_advisory_xact_lock($1)`, [PRICE_BOOK_LOCK]);
    } catch (error) {
      if (sqlState(error) !== LOCK_NOT_AVAILABLE) throw error;
      // The transaction is aborted: who holds it now is read on a connection of its own.
      const still = await lockHolder(this.dataSource.manager).catch(() => holder);
      throw new PriceBookLockedError(still ?? holder, wait.timeoutMs);
    } finally {
      if (client && deadline !== undefined) client.deadlineMs = deadline;
    }
    await tx.query(`SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $2, true)`, [
      saved.lock,
      saved.statement,
    ]);
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

  /** Which of `productKeys` have a record, in any scope. */
  async pricedProducts(tx: PriceBookTransaction, productKeys: readonly string[]): Promise<Set<string>> {
    if (productKeys.length === 0) return new Set();
    const found = await rows<{ product_key: string }>(
      tx,
      `SELECT DISTINCT product_key FROM price_record WHERE product_key = ANY($1::text[])`,
      [[...productKeys]],
    );
    return new Set(found.map((row) => row.product_key));
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

  /**
   * True when no price was ever recorded, nor anything but what the schema's migrations logged
   * (SCHEMA_ACTOR: the first migration's availability): the embedded default loads the sample book then.
   */
  async isEmpty(): Promise<boolean> {
    const [row] = await rows<{ empty: boolean }>(
      this.dataSource.manager,
      `SELECT NOT EXISTS (SELECT 1 FROM price_record)
              AND NOT EXISTS (SELECT 1 FROM price_change WHERE actor IS DISTINCT FROM $1) AS empty`,
      [SCHEMA_ACTOR],
    );
    return row.empty;
  }
}

/** An interval parameter of whole milliseconds; null for none. */
function intervalOf(ms: number | undefined): string | null {
  return ms === undefined ? null : `${Math.ceil(ms)} milliseconds`;
}

/**
 * The session holding the price book's advisory lock in this database (pg_locks joined with
 * pg_stat_activity; a bigint key is held as classid = its high 32 bits, objid = its low 32 bits,
 * objsubid = 1), or undefined when none does any more.
 */
async function lockHolder(db: PriceBookTransaction): Promise<LockHolder | undefined> {
  const [row] = await rows<{
    pid: number;
    application_name: string | null;
    role: string | null;
    client: string | null;
    since: Date | null;
  }>(
    db,
    `SELECT l.pid, nullif(a.application_name, '') AS application_name, a.usename::text AS role,
            coalesce(a.client_hostname, host(a.client_addr)) AS client, a.xact_start AS since
       FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = ($1::bigint >> 32)::oid AND l.objid = ($1::bigint & 4294967295)::oid AND l.objsubid = 1
      LIMIT 1`,
    [PRICE_BOOK_LOCK],
  );
  if (row === undefined) return undefined;
  return {
    pid: row.pid,
    applicationName: row.application_name,
    role: row.role,
    client: row.client,
    since: row.since,
  };
}
