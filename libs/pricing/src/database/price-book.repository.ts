import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import type { PriceRecord } from '../core/price-record';
import { StringPool } from './string-pool';
import type { LoggedChange, PriceChange, PriceChangeKind, PriceHistory } from '../price-book/format-history';
import type { Author } from '../price-book/author';
import type { ImportPlan } from '../price-book/plan-import';
import type { Withdrawal, WithdrawalPlan } from '../price-book/plan-withdrawal';
import type { Progress } from '../price-book/progress';
import type { PricingChanges, PricingData } from './pricing-data';
import { PriceBookCommitUnknownError } from '../errors/pricing-error';

/** Channel of the NOTIFY that every change of the price book sends. */
export const PRICE_BOOK_CHANNEL = 'pricing_price_book_changed';
/** Advisory lock that serializes writes of the price book. */
const PRICE_BOOK_LOCK = 4_705_212_001;
/** Rows per statement when writing, and per page when reading: every statement stays short. */
const BATCH = 5_000;
/** Small enough that turning a page into records holds the event loop only a few milliseconds. */
const PAGE = 5_000;

/**
 * A transaction of the price book (inTransaction): every write's statements run in the one it is
 * given, so that a workflow (services/price-book.service.ts) decides what is written together.
 */
export type PriceBookTransaction = EntityManager;

/** A product key and a scope: the list price (`organizationId` null) or one organization's. */
export interface PriceScope {
  readonly productKey: string;
  readonly organizationId: string | null;
}

/** The whole stored price book: every record and the availability of products. */
export interface StoredBook {
  readonly records: readonly PriceRecord[];
  readonly availability: ReadonlyMap<string, boolean>;
}

interface AvailabilityRow {
  readonly product_key: string;
  readonly on_sale: boolean;
}

interface ChangedAtRow {
  readonly changed_at: number;
}

interface VersionRow {
  readonly version: string;
}

interface ChangeSummaryRow {
  readonly last_change_id: string;
  readonly writes: number;
  readonly records: number;
}

interface ProductKeyRow {
  readonly product_key: string;
}

interface InstantRow {
  readonly instant: Date;
}

interface InsertedRow {
  readonly id: string;
  readonly ord: string;
}

interface PriceChangeRow {
  readonly changed_at: number;
  readonly change: PriceChangeKind;
  readonly price_record_id: number | null;
  readonly actor: string | null;
  readonly reason: string | null;
}

/** A change-log row with its key and scope, and the record it names as it is now (LEFT JOIN). */
interface LoggedChangeRow extends PriceChangeRow, Partial<Omit<PriceRecordRow, 'product_key' | 'organization_id'>> {
  readonly change_id: number;
  readonly product_key: string;
  readonly organization_id: string | null;
  readonly on_sale: boolean | null;
}

function toLoggedChange(row: LoggedChangeRow): LoggedChange {
  const record =
    row.price_record_id !== null && row.valid_from !== undefined && row.valid_from !== null
      ? toPriceRecord({ ...(row as unknown as PriceRecordRow), id: row.price_record_id, superseded_by: null })
      : null;
  return {
    ...toPriceChange(row),
    productKey: row.product_key,
    organizationId: row.organization_id,
    record,
    onSale: row.on_sale,
  };
}

function toPriceChange(row: PriceChangeRow): PriceChange {
  return {
    changedAt: row.changed_at,
    change: row.change,
    priceRecordId: row.price_record_id,
    actor: row.actor,
    reason: row.reason,
  };
}

/** A timestamp column as epoch milliseconds (parsing 300,000 timestamps as text costs more than the query). */
const epochMs = (column: string, alias = column): string =>
  `(extract(epoch FROM ${column}) * 1000)::float8 AS ${alias}`;
/** What a price record reads of a row: instants as epoch milliseconds, the id as a number (below 2^53). */
const RECORD_COLUMNS = `price_record.id::float8 AS id, product_key, organization_id, unit_type, unit_count,
  amount::text AS amount, ${epochMs('valid_from')}, ${epochMs('valid_until')}, ${epochMs('recorded_at')},
  superseded_by::float8 AS superseded_by`;

/** A row of price_record as read (RECORD_COLUMNS). */
interface PriceRecordRow {
  readonly id: number;
  readonly product_key: string;
  readonly organization_id: string | null;
  readonly unit_type: PriceRecord['unitType'];
  readonly unit_count: number;
  readonly amount: string;
  readonly valid_from: number;
  readonly valid_until: number | null;
  readonly recorded_at: number;
  readonly superseded_by: number | null;
}

/** The one mapping from a stored row to the domain's price record. */
function toPriceRecord(row: PriceRecordRow): PriceRecord {
  return {
    id: row.id,
    productKey: row.product_key,
    organizationId: row.organization_id,
    unitType: row.unit_type,
    unitCount: row.unit_count,
    amount: row.amount,
    validFrom: row.valid_from,
    validUntil: row.valid_until,
    recordedAt: row.recorded_at,
    supersededBy: row.superseded_by,
  };
}

/** Rows of a query, typed by the caller: the SQL and its row shape live side by side here. */
async function rows<T>(db: EntityManager, sql: string, parameters: unknown[] = []): Promise<T[]> {
  return db.query<T[]>(sql, parameters);
}

/**
 * The SQL of the price book: prices, availability, the change log and the version counter. The
 * reads of the prices held in memory and of operators' commands each run in a snapshot of their
 * own; a write's statements run in the transaction its workflow gives them (inTransaction:
 * services/price-book.service.ts decides what is written together, and whether it is kept).
 */
@Injectable()
export class PriceBookRepository {
  /** The product keys and organization ids of the prices held, each once (held-price.ts). */
  private readonly pool = new StringPool();

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Everything pricing serves, read in one snapshot (REPEATABLE READ), in pages, as held prices;
   * with `listOnly`, every record but organizations' prices (and `listOnly` in the result), which
   * a book of a million records reads in a fraction of the time (snapshot/price-book-loader.ts).
   */
  loadPricingData({ listOnly = false }: { listOnly?: boolean } = {}): Promise<PricingData> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      const [{ last_change_id: lastChangeId }] = await rows<{ last_change_id: string }>(
        db,
        `SELECT coalesce(max(id), 0)::text AS last_change_id FROM price_change`,
      );
      const records = await readHeldPrices(db, this.pool, listOnly ? 'organization_id IS NULL' : undefined);
      const availability = await readAvailability(db);
      const listWrites = await readListWrites(db, '0');
      const version = await readVersion(db);
      return { records, availability, listWrites, version, lastChangeId, listOnly };
    });
  }

  /**
   * What was written after the change `sinceChangeId`, in one snapshot: every record of the
   * product keys those changes name (all scopes; a withdrawn record is simply absent), the new
   * list writes, availability and the version. Ended history of other keys is not read again.
   * Writes take the price book lock before their change ids, so ids grow in commit order and
   * nothing committed later can appear below `sinceChangeId`.
   */
  loadChangesSince(sinceChangeId: string): Promise<PricingChanges> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      const [summary] = await rows<ChangeSummaryRow>(
        db,
        `SELECT coalesce(max(id), $1::bigint)::text AS last_change_id,
                count(DISTINCT changed_at)::int AS writes,
                (SELECT record_count FROM price_book_version)::int AS records
           FROM price_change WHERE id > $1::bigint`,
        [sinceChangeId],
      );
      const keys = await rows<ProductKeyRow>(
        db,
        `SELECT DISTINCT product_key FROM price_change WHERE id > $1::bigint`,
        [sinceChangeId],
      );
      const productKeys = keys.map((k) => k.product_key);
      const records =
        keys.length === 0 ? [] : await readHeldPrices(db, this.pool, `product_key = ANY($2::text[])`, productKeys);
      return {
        sinceChangeId,
        productKeys,
        records,
        availability: await readAvailability(db),
        listWrites: await readListWrites(db, sinceChangeId),
        version: await readVersion(db),
        lastChangeId: summary.last_change_id,
        writeCount: summary.writes,
        recordCount: summary.records,
      };
    });
  }

  /** The counter every write moves; cheap to poll. */
  readVersion(): Promise<string> {
    return readVersion(this.dataSource.manager);
  }

  /**
   * Runs `work` in one transaction and commits it, or, with `commit: false`, rolls it back once
   * `work` is done (a dry run: the same statements, nothing kept, no NOTIFY sent). When `work`
   * throws, nothing is kept either; when the connection fails during the commit, nobody knows
   * (PriceBookCommitUnknownError).
   */
  async inTransaction<T>(work: (tx: PriceBookTransaction) => Promise<T>, { commit = true } = {}): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const result = await work(runner.manager);
      if (commit) await commitOrSayUnknown(runner);
      else await runner.rollbackTransaction();
      return result;
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }

  /**
   * Takes the price book lock, which serializes every write, and returns the write's instant: the
   * time the lock was granted, so that serialized writes have increasing instants, rounded up to
   * the millisecond (a Date has no microseconds), so that it is never before the transaction's
   * now(), which the history trigger checks ends against.
   */
  async lock(tx: PriceBookTransaction): Promise<Date> {
    await tx.query(`SELECT pg_advisory_xact_lock($1)`, [PRICE_BOOK_LOCK]);
    const [{ instant }] = await rows<InstantRow>(
      tx,
      `SELECT date_trunc('milliseconds', t) + CASE WHEN t > date_trunc('milliseconds', t)
                THEN interval '1 millisecond' ELSE interval '0' END AS instant
         FROM statement_timestamp() AS t`,
    );
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
   * Writes a plan with a few bulk statements, BATCH rows each (unnest arrays), never a round trip
   * per row; each statement stays well within the database timeout.
   */
  writePlan(
    tx: PriceBookTransaction,
    plan: ImportPlan,
    instant: Date,
    author: Author,
    progress: Progress,
  ): Promise<void> {
    return writePlan(tx, plan, instant, author, progress);
  }

  /** Withdraws what `plan` names: a scheduled price deleted, the prices it ended reopened or re-ended. */
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
    for (const reend of reends) {
      await tx.query(`UPDATE price_record SET valid_until = $2, superseded_by = $3 WHERE id = $1`, [
        reend.id,
        reend.validUntil === null ? null : new Date(reend.validUntil),
        reend.supersededBy,
      ]);
    }
    await tx.query(
      `INSERT INTO price_change (changed_at, product_key, organization_id, change, price_record_id, actor, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        instant,
        withdrawal.productKey,
        withdrawal.organizationId,
        deleteId !== null ? 'withdraw_price' : 'withdraw_end',
        deleteId ?? reends[0]?.id ?? null,
        author.actor,
        author.reason,
      ],
    );
  }

  /** Moves the version and notifies listening instances; the notification goes out on commit. */
  async publishChange(tx: PriceBookTransaction): Promise<string> {
    // A top-level UPDATE would come back from TypeORM as [rows, rowCount]; as a CTE it is a SELECT.
    const [{ version }] = await rows<VersionRow>(
      tx,
      `WITH moved AS (UPDATE price_book_version SET version = version + 1 RETURNING version)
       SELECT version::text FROM moved`,
    );
    await tx.query(`SELECT pg_notify($1, $2)`, [PRICE_BOOK_CHANNEL, version]);
    return version;
  }

  /** The whole price book, read in one snapshot. */
  readBook(): Promise<StoredBook> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => ({
      records: await readRecords(db),
      availability: await readAvailability(db),
    }));
  }

  /** Every record of one key and scope (`organizationId` null: the list price), and its change log. */
  history(productKey: string, organizationId: string | null): Promise<PriceHistory> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      const scope = organizationId === null ? 'organization_id IS NULL' : 'organization_id = $2';
      const parameters = organizationId === null ? [productKey] : [productKey, organizationId];
      const records = await rows<PriceRecordRow>(
        db,
        `SELECT ${RECORD_COLUMNS} FROM price_record WHERE product_key = $1 AND ${scope}
          ORDER BY price_record.valid_from, price_record.id`,
        parameters,
      );
      const changes = await rows<PriceChangeRow>(
        db,
        `SELECT ${epochMs('changed_at')}, change, price_record_id::float8 AS price_record_id, actor, reason FROM price_change
          WHERE product_key = $1 AND ${scope} AND change <> 'availability' ORDER BY price_change.changed_at, price_change.id`,
        parameters,
      );
      return { records: records.map(toPriceRecord), changes: changes.map(toPriceChange) };
    });
  }

  /**
   * The change log of every key and scope with `changedAt` in [since, until) (either open), oldest
   * first, given to `consume` a page at a time (PAGE rows), each change with the record it names as
   * it is now (none for a withdrawn price or availability), read in one snapshot.
   */
  changes(
    range: { readonly since?: number; readonly until?: number },
    consume: (page: readonly LoggedChange[]) => void | Promise<void>,
  ): Promise<void> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      let after = 0;
      for (;;) {
        // Change ids grow with changed_at (every write takes the price book lock first): pages by id.
        const page = await rows<LoggedChangeRow>(
          db,
          `SELECT c.id::float8 AS change_id, ${epochMs('c.changed_at', 'changed_at')},
                  c.change, c.price_record_id::float8 AS price_record_id, c.actor, c.reason, c.product_key, c.organization_id, c.on_sale,
                  r.unit_type, r.unit_count, r.amount::text AS amount, ${epochMs('r.valid_from', 'valid_from')},
                  ${epochMs('r.valid_until', 'valid_until')}, ${epochMs('r.recorded_at', 'recorded_at')}
             FROM price_change c LEFT JOIN price_record r ON r.id = c.price_record_id
            WHERE c.id > $1 AND ($2::timestamptz IS NULL OR c.changed_at >= $2) AND ($3::timestamptz IS NULL OR c.changed_at < $3)
            ORDER BY c.id LIMIT ${PAGE}`,
          [after, instantParameter(range.since), instantParameter(range.until)],
        );
        await consume(page.map(toLoggedChange));
        if (page.length < PAGE) return;
        after = page[page.length - 1].change_id;
      }
    });
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

/**
 * Price records in id order (all, or those `where` selects, its parameter as $2), a page per
 * statement (keyset), so no statement runs long.
 */
async function readRecords(db: EntityManager, where = 'true', parameter?: string): Promise<PriceRecord[]> {
  const records: PriceRecord[] = [];
  let after = 0;
  for (;;) {
    const page = await rows<PriceRecordRow>(
      db,
      // price_record.id, not id: the output column `id` is text, and pages in text order would
      // skip and repeat records once there is more than one page.
      `SELECT ${RECORD_COLUMNS} FROM price_record
        WHERE id > $1::bigint AND ${where} ORDER BY price_record.id LIMIT ${PAGE}`,
      parameter === undefined ? [after] : [after, parameter],
    );
    for (const row of page) records.push(toPriceRecord(row));
    if (page.length < PAGE) return records;
    after = page[page.length - 1].id;
  }
}

/** Instants (epoch ms) of list-price writes after the change `afterChangeId`, for `last_changed`. */
async function readListWrites(db: EntityManager, afterChangeId: string): Promise<number[]> {
  const writes = await rows<ChangedAtRow>(
    db,
    `SELECT DISTINCT ${epochMs('changed_at')} FROM price_change
      WHERE id > $1::bigint AND organization_id IS NULL AND change <> 'availability' ORDER BY changed_at`,
    [afterChangeId],
  );
  return writes.map((w) => w.changed_at);
}

/**
 * The held prices (all, or those `where` selects, its parameter as $2), a page per statement
 * (keyset, by id), each row turned into a compact held price as its page is read: the rows of a
 * million records are never all held at once.
 */
async function readHeldPrices(
  db: EntityManager,
  pool: StringPool,
  where = 'true',
  parameter?: unknown,
): Promise<PriceRecord[]> {
  const prices: PriceRecord[] = [];
  let after = 0;
  for (;;) {
    const page = await rows<PriceRecordRow>(
      db,
      `SELECT ${RECORD_COLUMNS} FROM price_record
        WHERE price_record.id > $1 AND ${where} ORDER BY price_record.id LIMIT ${PAGE}`,
      parameter === undefined ? [after] : [after, parameter],
    );
    for (const row of page) {
      prices.push({
        id: row.id,
        productKey: pool.intern(row.product_key),
        organizationId: pool.intern(row.organization_id),
        unitType: pool.intern(row.unit_type),
        unitCount: row.unit_count,
        amount: pool.intern(row.amount),
        validFrom: row.valid_from,
        validUntil: row.valid_until,
        recordedAt: row.recorded_at,
        supersededBy: row.superseded_by,
      });
    }
    if (page.length < PAGE) return prices;
    after = page[page.length - 1].id;
  }
}

async function readAvailability(db: EntityManager): Promise<Map<string, boolean>> {
  const found = await rows<AvailabilityRow>(db, `SELECT product_key, on_sale FROM product_availability`);
  return new Map(found.map((row) => [row.product_key, row.on_sale]));
}

async function readVersion(db: EntityManager): Promise<string> {
  const [row] = await rows<VersionRow>(db, `SELECT version::text FROM price_book_version`);
  return row.version;
}

async function writePlan(
  db: EntityManager,
  plan: ImportPlan,
  instant: Date,
  author: Author,
  progress: Progress,
): Promise<void> {
  let written = 0;
  progress.start('writing', plan.ends.length + plan.inserts.length + plan.availability.length, 'rows');
  const advance = (rowCount: number): void => progress.update((written += rowCount));

  // Ends first, so that the prices that follow them never overlap while being inserted.
  await inBatches(plan.ends, async (batch) => {
    await db.query(
      `UPDATE price_record SET valid_until = planned.valid_until
         FROM unnest($1::bigint[], $2::timestamptz[]) AS planned(id, valid_until)
        WHERE price_record.id = planned.id`,
      [batch.map((end) => end.id), batch.map((end) => new Date(end.validUntil))],
    );
    advance(batch.length);
  });

  const ids: string[] = [];
  await inBatches(plan.inserts, async (batch, start) => {
    const inserted = await rows<InsertedRow>(
      db,
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::numeric[],
                              $6::timestamptz[], $7::timestamptz[])
           WITH ORDINALITY AS t(product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until, ord)
       ), inserted AS (
         INSERT INTO price_record (product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until)
         SELECT product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until
           FROM input ORDER BY ord
         RETURNING id, product_key, organization_id, valid_from
       )
       SELECT inserted.id::text, input.ord::text FROM inserted
         JOIN input ON input.product_key = inserted.product_key
                   AND input.organization_id IS NOT DISTINCT FROM inserted.organization_id
                   AND input.valid_from = inserted.valid_from`,
      [
        batch.map((p) => p.productKey),
        batch.map((p) => p.organizationId),
        batch.map((p) => p.unitType),
        batch.map((p) => p.unitCount),
        batch.map((p) => p.amount),
        batch.map((p) => new Date(p.validFrom)),
        batch.map((p) => (p.validUntil === null ? null : new Date(p.validUntil))),
      ],
    );
    // (key, scope, valid_from) is unique: prices of one key and scope never overlap.
    for (const row of inserted) ids[start + Number(row.ord) - 1] = row.id;
    advance(batch.length);
  });

  const links = [
    ...plan.inserts.flatMap((p, i) => (p.supersededBy === null ? [] : [[ids[i], ids[p.supersededBy]]])),
    ...plan.ends.map((end) => [end.id, ids[end.supersededBy]]),
  ];
  await inBatches(links, (batch) =>
    db.query(
      `UPDATE price_record SET superseded_by = link.by
         FROM unnest($1::bigint[], $2::bigint[]) AS link(id, by) WHERE price_record.id = link.id`,
      [batch.map(([id]) => id), batch.map(([, by]) => by)],
    ),
  );

  await inBatches(plan.availability, async (batch) => {
    await db.query(
      `INSERT INTO product_availability (product_key, on_sale, updated_at)
       SELECT product_key, on_sale, $3 FROM unnest($1::text[], $2::boolean[]) AS planned(product_key, on_sale)
       ON CONFLICT (product_key) DO UPDATE SET on_sale = excluded.on_sale, updated_at = excluded.updated_at`,
      [batch.map((a) => a.productKey), batch.map((a) => a.onSale), instant],
    );
    advance(batch.length);
  });

  // One change-log row per write; only an availability row says what it set (on_sale).
  const row = (
    key: string,
    org: string | null,
    change: string,
    id: string | number | null,
    onSale: boolean | null = null,
  ) => ({
    key,
    org,
    change,
    id,
    onSale,
  });
  const changes = [
    ...plan.inserts.map((p, i) => row(p.productKey, p.organizationId, 'set', ids[i])),
    ...plan.ends.map((e) => row(e.record.productKey, e.record.organizationId, 'end', e.id)),
    ...plan.availability.map((a) => row(a.productKey, null, 'availability', null, a.onSale)),
  ];
  await inBatches(changes, (batch) =>
    db.query(
      `INSERT INTO price_change (changed_at, actor, reason, product_key, organization_id, change, price_record_id, on_sale)
       SELECT $1, $2, $3, * FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::boolean[])`,
      [
        instant,
        author.actor,
        author.reason,
        batch.map((c) => c.key),
        batch.map((c) => c.org),
        batch.map((c) => c.change),
        batch.map((c) => c.id),
        batch.map((c) => c.onSale),
      ],
    ),
  );
}

/** An instant (epoch ms) as a timestamptz parameter. */
function instantParameter(ms: number | undefined): Date | null {
  return ms === undefined ? null : new Date(ms);
}

/** Runs `write` on consecutive slices of BATCH items, one after the other. */
async function inBatches<T>(
  items: readonly T[],
  write: (batch: readonly T[], start: number) => Promise<unknown>,
): Promise<void> {
  for (let start = 0; start < items.length; start += BATCH) {
    await write(items.slice(start, start + BATCH), start);
  }
}

/** A SQLSTATE: PostgreSQL answered, so a failed COMMIT was rolled back. */
const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * Commits; a failure that PostgreSQL did not answer (the connection went away while it committed)
 * is PriceBookCommitUnknownError, since the change may be in force.
 */
async function commitOrSayUnknown(runner: QueryRunner): Promise<void> {
  try {
    await runner.commitTransaction();
  } catch (error) {
    const code =
      (error as { driverError?: { code?: unknown }; code?: unknown }).driverError?.code ??
      (error as { code?: unknown }).code;
    if (typeof code === 'string' && SQLSTATE.test(code)) throw error;
    throw new PriceBookCommitUnknownError(error);
  }
}
