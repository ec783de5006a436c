import type { EntityManager } from 'typeorm';
import type { Author } from '../price-book/author';
import type { ImportPlan, PlannedEnd, PlannedInsert } from '../price-book/plan-import';
import type { AvailabilityEntry } from '../price-book/price-book';
import { rows } from './price-book-rows';

// The statements of an import plan (PriceBookWrites.writePlan), one function per kind, each a bulk
// statement of up to BATCH rows (unnest arrays), never a round trip per row.

/** Rows per statement: each stays well within the database timeout. */
export const BATCH = 5_000;

/** Runs `write` on consecutive slices of BATCH items, one after the other. */
export async function inBatches<T>(
  items: readonly T[],
  write: (batch: readonly T[], start: number) => Promise<unknown>,
): Promise<void> {
  for (let start = 0; start < items.length; start += BATCH) {
    await write(items.slice(start, start + BATCH), start);
  }
}

/** Called with the number of rows a statement wrote. */
type Written = (rowCount: number) => void;

/** Sets the ends of stored prices that scheduled changes end. */
export function writeEnds(db: EntityManager, ends: readonly PlannedEnd[], written: Written): Promise<void> {
  return inBatches(ends, async (batch) => {
    await db.query(
      `UPDATE price_record SET valid_until = planned.valid_until
         FROM unnest($1::bigint[], $2::timestamptz[]) AS planned(id, valid_until)
        WHERE price_record.id = planned.id`,
      [batch.map((end) => end.id), batch.map((end) => new Date(end.validUntil))],
    );
    written(batch.length);
  });
}

/** Inserts the new prices; returns their ids, in the order of `inserts`. */
export async function insertPrices(
  db: EntityManager,
  inserts: readonly PlannedInsert[],
  written: Written,
): Promise<number[]> {
  const ids: number[] = [];
  await inBatches(inserts, async (batch, start) => {
    const inserted = await rows<{ id: number; ord: number }>(
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
       SELECT inserted.id::float8 AS id, input.ord::float8 AS ord FROM inserted
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
    for (const row of inserted) ids[start + row.ord - 1] = row.id;
    written(batch.length);
  });
  return ids;
}

/** Links each price a scheduled change ends to the price that ends it. */
export function linkSuccessors(db: EntityManager, plan: ImportPlan, ids: readonly number[]): Promise<void> {
  const links = [
    ...plan.inserts.flatMap((p, i) => (p.supersededBy === null ? [] : [[ids[i], ids[p.supersededBy]]])),
    ...plan.ends.map((end) => [end.id, ids[end.supersededBy]]),
  ];
  return inBatches(links, (batch) =>
    db.query(
      `UPDATE price_record SET superseded_by = link.by
         FROM unnest($1::bigint[], $2::bigint[]) AS link(id, by) WHERE price_record.id = link.id`,
      [batch.map(([id]) => id), batch.map(([, by]) => by)],
    ),
  );
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

/** One change-log row per write of the plan; only an availability row says what it set (on_sale). */
export function logPlan(
  db: EntityManager,
  plan: ImportPlan,
  ids: readonly number[],
  instant: Date,
  author: Author,
): Promise<void> {
  const row = (key: string, org: string | null, change: string, id: number | null, onSale: boolean | null = null) => ({
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
  return inBatches(changes, (batch) =>
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
