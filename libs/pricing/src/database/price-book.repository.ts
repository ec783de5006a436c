import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { PriceBookRefusedError } from '../errors/pricing-error';
import { describeImportPlan, type ImportReport } from '../price-book/describe-import';
import { formatPriceBook } from '../price-book/format-price-book';
import type { PriceBook } from '../price-book/price-book';
import type { PriceHistory, PriceChangeKind } from '../price-book/format-history';
import { planChangesNothing, planImport, type ImportPlan } from '../price-book/plan-import';
import { NO_PROGRESS, type Progress } from '../price-book/progress';
import { planWithdrawal, type Withdrawal } from '../price-book/plan-withdrawal';
import type { PriceRecord } from '../price-list/price-record';
import type { PricingChanges, PricingData } from '../snapshot/pricing-snapshot';

/** Channel of the NOTIFY that every change of the price book sends. */
export const PRICE_BOOK_CHANNEL = 'pricing_price_book_changed';
/** Advisory lock that serializes writes of the price book. */
const PRICE_BOOK_LOCK = 4_705_212_001;
/** Rows per statement when writing, and per page when reading: every statement stays short. */
const BATCH = 5_000;
/** Small enough that turning a page into records holds the event loop only a few milliseconds. */
const PAGE = 5_000;

/** What an import did (or, for a dry run, would do): the changes line by line and their counts. */
export interface ImportResult extends ImportReport {
  /** False when the book restates what is recorded; a dry run reports what would change. */
  readonly changed: boolean;
}

export interface ApplyOptions {
  /**
   * Check and write the book exactly as an import does (same lock, same transaction, same
   * statements), then roll back: nothing is kept, and no instance is notified.
   */
  readonly dryRun?: boolean;
  /** Where checking and writing report their progress. */
  readonly progress?: Progress;
}

/** Thrown inside a dry run's transaction, after its writes, so that they are rolled back. */
class DryRunRollback extends Error {
  constructor(readonly result: ImportResult) {
    super('dry run: rolled back');
  }
}

export interface WithdrawalResult {
  readonly instant: Date;
  readonly version: string;
}

/** A row of price_record as read: instants as epoch milliseconds (parsing 300,000 timestamps as text costs more than the query). */
interface PriceRecordRow {
  readonly id: string;
  readonly product_key: string;
  readonly organization_id: string | null;
  readonly unit_type: PriceRecord['unitType'];
  readonly unit_count: number;
  readonly amount: string;
  readonly valid_from: number;
  readonly valid_until: number | null;
  readonly recorded_at: number;
  readonly superseded_by: string | null;
}

interface AvailabilityRow {
  readonly product_key: string;
  readonly on_sale: boolean;
}

interface ChangedAtRow {
  readonly changed_at: Date;
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
  readonly price_record_id: string | null;
}

const epochMs = (column: string): string => `(extract(epoch FROM ${column}) * 1000)::float8 AS ${column}`;
const RECORD_COLUMNS = `id::text, product_key, organization_id, unit_type, unit_count, amount::text,
  ${epochMs('valid_from')}, ${epochMs('valid_until')}, ${epochMs('recorded_at')}, superseded_by::text`;

/** The one mapping from a stored row to the domain's price record. */
function toPriceRecord(row: PriceRecordRow): PriceRecord {
  return {
    id: row.id,
    productKey: row.product_key,
    organizationId: row.organization_id,
    unitType: row.unit_type,
    unitCount: row.unit_count,
    amount: row.amount,
    validFrom: new Date(row.valid_from),
    validUntil: row.valid_until === null ? null : new Date(row.valid_until),
    recordedAt: new Date(row.recorded_at),
    supersededBy: row.superseded_by,
  };
}

/** Rows of a query, typed by the caller: the SQL and its row shape live side by side here. */
async function rows<T>(db: EntityManager, sql: string, parameters: unknown[] = []): Promise<T[]> {
  return db.query<T[]>(sql, parameters);
}

/**
 * Every read and write of the price book: prices, availability, the change log and the version
 * counter. Writes are all-or-nothing, serialized by an advisory lock, and end with a NOTIFY.
 */
@Injectable()
export class PriceBookRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Everything pricing serves, read in one snapshot (REPEATABLE READ), in pages. */
  loadPricingData(): Promise<PricingData> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      const [{ last_change_id: lastChangeId }] = await rows<{ last_change_id: string }>(
        db,
        `SELECT coalesce(max(id), 0)::text AS last_change_id FROM price_change`,
      );
      const records = await readRecords(db);
      const availability = await readAvailability(db);
      const listWrites = await readListWrites(db, '0');
      const version = await readVersion(db);
      return { records, availability, listWrites, version, lastChangeId };
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
                (SELECT count(*) FROM price_record)::int AS records
           FROM price_change WHERE id > $1::bigint`,
        [sinceChangeId],
      );
      const keys = await rows<ProductKeyRow>(
        db,
        `SELECT DISTINCT product_key FROM price_change WHERE id > $1::bigint`,
        [sinceChangeId],
      );
      const records =
        keys.length === 0
          ? []
          : await readRecords(
              db,
              `product_key IN (SELECT product_key FROM price_change WHERE id > $2::bigint)`,
              sinceChangeId,
            );
      return {
        sinceChangeId,
        productKeys: keys.map((k) => k.product_key),
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
   * Applies a price book in one transaction, serialized with every other write: all of it, or,
   * when any entry is refused, nothing. The instant is when the price book lock was granted
   * (see lockPriceBook). A dry run takes the same path and rolls back after writing.
   */
  async apply(book: PriceBook, options: ApplyOptions = {}): Promise<ImportResult> {
    const progress = options.progress ?? NO_PROGRESS;
    try {
      return await this.dataSource.transaction(async (db) => {
        progress.start('checking', book.prices.length, 'entries');
        const instant = await lockPriceBook(db);
        const stored = await readRecords(db);
        const planned = planImport(book, stored, await readAvailability(db), instant, (done) => progress.update(done));
        if ('errors' in planned) throw new PriceBookRefusedError(planned.errors);
        const { plan } = planned;
        const changed = !planChangesNothing(plan);
        if (changed) await writePlan(db, plan, instant, progress);
        const result: ImportResult = {
          changed,
          dryRun: options.dryRun === true,
          instant,
          version: changed && !options.dryRun ? await publishChange(db) : await readVersion(db),
          inserted: plan.inserts.length,
          ended: plan.ends.length,
          availabilityChanged: plan.availability.length,
          unchanged: plan.unchanged,
          changes: describeImportPlan(plan),
        };
        if (options.dryRun) throw new DryRunRollback(result);
        return result;
      });
    } catch (error) {
      if (error instanceof DryRunRollback) return error.result;
      throw error;
    } finally {
      progress.stop();
    }
  }

  /** Withdraws a scheduled price or a scheduled end, in one transaction. */
  withdraw(withdrawal: Withdrawal): Promise<WithdrawalResult> {
    return this.dataSource.transaction(async (db) => {
      const instant = await lockPriceBook(db);
      const planned = planWithdrawal(withdrawal, await readRecords(db), instant);
      if ('error' in planned) throw new PriceBookRefusedError([planned.error]);
      const { deleteId, reends } = planned.plan;
      // Unlink first: the successor's own link and the records it ended point at the deleted row.
      for (const reend of reends) {
        await db.query(`UPDATE price_record SET superseded_by = NULL WHERE id = $1`, [reend.id]);
      }
      if (deleteId !== null) await db.query(`DELETE FROM price_record WHERE id = $1`, [deleteId]);
      for (const reend of reends) {
        await db.query(`UPDATE price_record SET valid_until = $2, superseded_by = $3 WHERE id = $1`, [
          reend.id,
          reend.validUntil,
          reend.supersededBy,
        ]);
      }
      await db.query(
        `INSERT INTO price_change (changed_at, product_key, organization_id, change, price_record_id)
         VALUES ($1, $2, $3, $4, $5)`,
        [
          instant,
          withdrawal.productKey,
          withdrawal.organizationId,
          deleteId !== null ? 'withdraw_price' : 'withdraw_end',
          deleteId ?? reends[0]?.id ?? null,
        ],
      );
      return { instant, version: await publishChange(db) };
    });
  }

  /** The whole price book in the import format (see formatPriceBook). */
  exportBook(): Promise<string> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) =>
      formatPriceBook(await readRecords(db), await readAvailability(db)),
    );
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
        `SELECT ${epochMs('changed_at')}, change, price_record_id::text FROM price_change
          WHERE product_key = $1 AND ${scope} AND change <> 'availability' ORDER BY price_change.changed_at, price_change.id`,
        parameters,
      );
      return {
        records: records.map(toPriceRecord),
        changes: changes.map((row) => ({
          changedAt: new Date(row.changed_at),
          change: row.change,
          priceRecordId: row.price_record_id,
        })),
      };
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
 * Takes the price book lock and returns the write's instant: the time the lock was granted, so
 * that serialized writes have increasing instants, rounded up to the millisecond (a Date has no
 * microseconds), so that it is never before the transaction's now(), which the history trigger
 * checks ends against.
 */
async function lockPriceBook(db: EntityManager): Promise<Date> {
  await db.query(`SELECT pg_advisory_xact_lock($1)`, [PRICE_BOOK_LOCK]);
  const [{ instant }] = await rows<InstantRow>(
    db,
    `SELECT date_trunc('milliseconds', t) + CASE WHEN t > date_trunc('milliseconds', t)
              THEN interval '1 millisecond' ELSE interval '0' END AS instant
       FROM statement_timestamp() AS t`,
  );
  return instant;
}

/**
 * Price records in id order (all, or those `where` selects, its parameter as $2), a page per
 * statement (keyset), so no statement runs long.
 */
async function readRecords(db: EntityManager, where = 'true', parameter?: string): Promise<PriceRecord[]> {
  const records: PriceRecord[] = [];
  let after = '0';
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

/** Instants of list-price writes after the change `afterChangeId`, for `last_changed`. */
async function readListWrites(db: EntityManager, afterChangeId: string): Promise<Date[]> {
  const writes = await rows<ChangedAtRow>(
    db,
    `SELECT DISTINCT changed_at FROM price_change
      WHERE id > $1::bigint AND organization_id IS NULL AND change <> 'availability' ORDER BY changed_at`,
    [afterChangeId],
  );
  return writes.map((w) => w.changed_at);
}

async function readAvailability(db: EntityManager): Promise<Map<string, boolean>> {
  const found = await rows<AvailabilityRow>(db, `SELECT product_key, on_sale FROM product_availability`);
  return new Map(found.map((row) => [row.product_key, row.on_sale]));
}

async function readVersion(db: EntityManager): Promise<string> {
  const [row] = await rows<VersionRow>(db, `SELECT version::text FROM price_book_version`);
  return row.version;
}

/**
 * Writes a plan with a few bulk statements, BATCH rows each (unnest arrays), never a round trip
 * per row; each statement stays well within the database timeout.
 */
async function writePlan(db: EntityManager, plan: ImportPlan, instant: Date, progress: Progress): Promise<void> {
  let written = 0;
  progress.start('writing', plan.ends.length + plan.inserts.length + plan.availability.length, 'rows');
  const advance = (rowCount: number): void => progress.update((written += rowCount));

  // Ends first, so that the prices that follow them never overlap while being inserted.
  await inBatches(plan.ends, async (batch) => {
    await db.query(
      `UPDATE price_record SET valid_until = planned.valid_until
         FROM unnest($1::bigint[], $2::timestamptz[]) AS planned(id, valid_until)
        WHERE price_record.id = planned.id`,
      [batch.map((end) => end.id), batch.map((end) => end.validUntil)],
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
        batch.map((p) => p.validFrom),
        batch.map((p) => p.validUntil),
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

  const changes = [
    ...plan.inserts.map((p, i) => ({ key: p.productKey, org: p.organizationId, change: 'set', id: ids[i] })),
    ...plan.ends.map((e) => ({ key: e.record.productKey, org: e.record.organizationId, change: 'end', id: e.id })),
    ...plan.availability.map((a) => ({ key: a.productKey, org: null, change: 'availability', id: null })),
  ];
  await inBatches(changes, (batch) =>
    db.query(
      `INSERT INTO price_change (changed_at, product_key, organization_id, change, price_record_id)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[])`,
      [instant, batch.map((c) => c.key), batch.map((c) => c.org), batch.map((c) => c.change), batch.map((c) => c.id)],
    ),
  );
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

/** Moves the version and notifies listening instances; the notification goes out on commit. */
async function publishChange(db: EntityManager): Promise<string> {
  // A top-level UPDATE would come back from TypeORM as [rows, rowCount]; as a CTE it is a SELECT.
  const [{ version }] = await rows<VersionRow>(
    db,
    `WITH moved AS (UPDATE price_book_version SET version = version + 1 RETURNING version)
     SELECT version::text FROM moved`,
  );
  await db.query(`SELECT pg_notify($1, $2)`, [PRICE_BOOK_CHANNEL, version]);
  return version;
}
