import type { EntityManager } from 'typeorm';
import type { Author } from '../price-book/author';
import type { ImportPlan, PlannedEnd, PlannedInsert } from '../price-book/plan-import';
import type { AvailabilityEntry } from '../price-book/price-book';
import type { LoggedRecord } from '../price-book/change-log-chain';
import { appendToLog, type LogChange } from './change-log';
import { inBatches, loggedRecordColumns, loggedRecordOf, rows } from './price-book-rows';

// The statements of an import plan (PriceBookWrites.writePlan), one function per kind, each a bulk
// statement of up to BATCH rows (unnest arrays), never a round trip per row.

/** Called with the number of rows a statement wrote. */
type Written = (rowCount: number) => void;

/**
 * Sets the ends of stored prices: those scheduled changes end, and ends of their own (an entry that
 * restates a price with a `valid_until`); returns each ended record as stored after (LoggedRecord), by id.
 */
export async function writeEnds(
  db: EntityManager,
  ends: readonly PlannedEnd[],
  written: Written,
): Promise<Map<string, LoggedRecord>> {
  const ended = new Map<string, LoggedRecord>();
  await inBatches(ends, async (batch) => {
    // As a CTE: TypeORM gives a top-level UPDATE's rows as [rows, rowCount].
    const stored = await rows<Record<string, unknown>>(
      db,
      `WITH ended AS (
         UPDATE price_record SET valid_until = planned.valid_until
           FROM unnest($1::bigint[], $2::timestamptz[]) AS planned(id, valid_until)
          WHERE price_record.id = planned.id
         RETURNING ${loggedRecordColumns()}
       )
       SELECT * FROM ended`,
      [batch.map((end) => end.id), batch.map((end) => new Date(end.validUntil))],
    );
    for (const row of stored) ended.set(row.id as string, loggedRecordOf(row));
    written(batch.length);
  });
  return ended;
}

/** Inserts the new prices; returns each as stored (LoggedRecord: its id, recorded_at, ...), in the order of `inserts`. */
export async function insertPrices(
  db: EntityManager,
  inserts: readonly PlannedInsert[],
  instant: Date,
  written: Written,
): Promise<LoggedRecord[]> {
  const records: LoggedRecord[] = [];
  await inBatches(inserts, async (batch, start) => {
    const inserted = await rows<Record<string, unknown> & { ord: number }>(
      db,
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::numeric[],
                              $6::timestamptz[], $7::timestamptz[])
           WITH ORDINALITY AS t(product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until, ord)
       ), inserted AS (
         INSERT INTO price_record (product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until,
                                   recorded_at)
         SELECT product_key, organization_id, unit_type, unit_count, amount, valid_from, valid_until, $8
           FROM input ORDER BY ord
         RETURNING price_record.valid_from AS stored_from, ${loggedRecordColumns()}
       )
       SELECT inserted.*, input.ord::float8 AS ord FROM inserted
         JOIN input ON input.product_key = inserted.product_key
                   AND input.organization_id IS NOT DISTINCT FROM inserted.organization_id
                   AND input.valid_from = inserted.stored_from`,
      [
        batch.map((p) => p.productKey),
        batch.map((p) => p.organizationId),
        batch.map((p) => p.unitType),
        batch.map((p) => p.unitCount),
        batch.map((p) => p.amount),
        batch.map((p) => new Date(p.validFrom)),
        batch.map((p) => (p.validUntil === null ? null : new Date(p.validUntil))),
        // The write's publication instant, which the database checks (its default, once per row, costs more).
        instant,
      ],
    );
    // (key, scope, valid_from) is unique: prices of one key and scope never overlap.
    for (const row of inserted) records[start + row.ord - 1] = loggedRecordOf(row);
    written(batch.length);
  });
  return records;
}

/**
 * Links each price a scheduled change ends to the price that ends it; returns the link each
 * record got (`superseded_by` as stored), by id.
 */
export async function linkSuccessors(
  db: EntityManager,
  plan: ImportPlan,
  ids: readonly number[],
): Promise<Map<string, string>> {
  const links = [
    ...plan.inserts.flatMap((p, i) => (p.supersededBy === null ? [] : [[ids[i], ids[p.supersededBy]]])),
    ...plan.ends.flatMap((end) => (end.supersededBy === null ? [] : [[end.id, ids[end.supersededBy]]])),
  ];
  const linked = new Map<string, string>();
  await inBatches(links, async (batch) => {
    const stored = await rows<{ id: string; superseded_by: string }>(
      db,
      `WITH linked AS (
         UPDATE price_record SET superseded_by = link.by
           FROM unnest($1::bigint[], $2::bigint[]) AS link(id, by) WHERE price_record.id = link.id
         RETURNING price_record.id::text AS id, price_record.superseded_by::text AS superseded_by
       )
       SELECT * FROM linked`,
      [batch.map(([id]) => id), batch.map(([, by]) => by)],
    );
    for (const row of stored) linked.set(row.id, row.superseded_by);
  });
  return linked;
}

/** Sets the availability of products. */
export function writeAvailability(
  db: EntityManager,
  availability: readonly AvailabilityEntry[],
  instant: Date,
  written: Written,
): Promise<void> {
  return inBatches(availability, async (batch) => {
    await db.query(
      `INSERT INTO product_availability (product_key, on_sale, updated_at)
       SELECT product_key, on_sale, $3 FROM unnest($1::text[], $2::boolean[]) AS planned(product_key, on_sale)
       ON CONFLICT (product_key) DO UPDATE SET on_sale = excluded.on_sale, updated_at = excluded.updated_at`,
      [batch.map((a) => a.productKey), batch.map((a) => a.onSale), instant],
    );
    written(batch.length);
  });
}

/** The records a plan wrote, as stored at the end of the write: what its change-log rows hold. */
export interface WrittenPlan {
  /** The inserted records, in the order of the plan's inserts. */
  readonly inserted: readonly LoggedRecord[];
  /** The records whose ends the plan set, by id. */
  readonly ended: ReadonlyMap<string, LoggedRecord>;
  /** The links the plan wrote (`superseded_by`), by id. */
  readonly links: ReadonlyMap<string, string>;
}

/**
 * One change-log row per write of the plan, each with what it did (change-log.ts): a `set` the
 * record written, an `end` the record ended, an availability row what it set.
 */
export function logPlan(db: EntityManager, plan: ImportPlan, written: WrittenPlan, author: Author): Promise<void> {
  const stored = (record: LoggedRecord): LoggedRecord => ({
    ...record,
    superseded_by: written.links.get(record.id) ?? record.superseded_by,
  });
  const changes: LogChange[] = [
    ...plan.inserts.map((p, i): LogChange => {
      const record = stored(written.inserted[i]);
      const scope = { productKey: p.productKey, organizationId: p.organizationId };
      return { change: 'set', ...scope, priceRecordId: record.id, onSale: null, effect: { record } };
    }),
    ...plan.ends.map((e): LogChange => {
      const ended = stored(written.ended.get(String(e.id))!);
      const scope = { productKey: e.record.productKey, organizationId: e.record.organizationId };
      return { change: 'end', ...scope, priceRecordId: ended.id, onSale: null, effect: { ends: [ended] } };
    }),
    ...plan.availability.map((a): LogChange => ({
      change: 'availability',
      productKey: a.productKey,
      organizationId: null,
      priceRecordId: null,
      onSale: a.onSale,
      effect: { on_sale: a.onSale },
    })),
  ];
  return appendToLog(db, changes, author);
}
