import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { PriceBookRefusedError } from '../errors/pricing-error';
import { formatPriceBook } from '../price-book/format-price-book';
import type { PriceBook } from '../price-book/price-book';
import { planChangesNothing, planImport, type ImportPlan } from '../price-book/plan-import';
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

export interface ImportResult {
  readonly changed: boolean;
  readonly inserted: number;
  readonly ended: number;
  readonly availabilityChanged: number;
  readonly instant: Date;
  readonly version: string;
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
   * (see lockPriceBook).
   */
  apply(book: PriceBook): Promise<ImportResult> {
    return this.dataSource.transaction(async (db) => {
      const instant = await lockPriceBook(db);
      const planned = planImport(book, await readRecords(db), await readAvailability(db), instant);
      if ('errors' in planned) throw new PriceBookRefusedError(planned.errors);
      const { plan } = planned;
      if (planChangesNothing(plan)) {
        return {
          changed: false,
          inserted: 0,
          ended: 0,
          availabilityChanged: 0,
          instant,
          version: await readVersion(db),
        };
      }
      await writePlan(db, plan, instant);
      const version = await publishChange(db);
      return {
        changed: true,
        inserted: plan.inserts.length,
        ended: plan.ends.length,
        availabilityChanged: plan.availability.length,
        instant,
        version,
      };
    });
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

async function writePlan(db: EntityManager, plan: ImportPlan, instant: Date): Promise<void> {
  // Ends first, so that the prices that follow them never overlap while being inserted.
  for (const end of plan.ends) {
    await db.query(`UPDATE price_record SET valid_until = $2 WHERE id = $1`, [end.id, end.validUntil]);
  }
  const ids: string[] = [];
  for (let start = 0; start < plan.inserts.length; start += BATCH) {
    const batch = plan.inserts.slice(start, start + BATCH);
    const inserted = await rows<InsertedRow>(
      db,
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::numeric[],
                              $6::timestamptz[], $7::timestamptz[])
           WITH ORDINALITY AS t(product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until, ord)
       ), inserted AS (
         INSERT INTO price_record
           (product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until, recorded_at)
         SELECT product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until, $8
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
        instant,
      ],
    );
    // (key, scope, valid_from) is unique: prices of one key and scope never overlap.
    for (const row of inserted) ids[start + Number(row.ord) - 1] = row.id;
  }
  const links = [
    ...plan.inserts.flatMap((p, i) => (p.supersededBy === null ? [] : [[ids[i], ids[p.supersededBy]]])),
    ...plan.ends.map((end) => [end.id, ids[end.supersededBy]]),
  ];
  if (links.length > 0) {
    await db.query(
      `UPDATE price_record SET superseded_by = link.by::bigint
         FROM unnest($1::text[], $2::text[]) AS link(id, by) WHERE price_record.id = link.id::bigint`,
      [links.map(([id]) => id), links.map(([, by]) => by)],
    );
  }
  for (const product of plan.availability) {
    await db.query(
      `INSERT INTO product_availability (product_key, on_sale, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (product_key) DO UPDATE SET on_sale = excluded.on_sale, updated_at = excluded.updated_at`,
      [product.productKey, product.onSale, instant],
    );
  }
  const changes = [
    ...plan.inserts.map((p, i) => ({ key: p.productKey, org: p.organizationId, change: 'set', id: ids[i] })),
    ...plan.ends.map((e) => {
      const successor = plan.inserts[e.supersededBy];
      return { key: successor.productKey, org: successor.organizationId, change: 'end', id: e.id };
    }),
    ...plan.availability.map((a) => ({ key: a.productKey, org: null, change: 'availability', id: null })),
  ];
  await db.query(
    `INSERT INTO price_change (changed_at, product_key, organization_id, change, price_record_id)
     SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[])`,
    [
      instant,
      changes.map((c) => c.key),
      changes.map((c) => c.org),
      changes.map((c) => c.change),
      changes.map((c) => c.id),
    ],
  );
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
