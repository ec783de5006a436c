import type { EntityManager } from 'typeorm';
import type { Author } from '../price-book/author';
import {
  canonicalJson,
  CHAIN_START,
  entryHash,
  loggedInstant,
  type ChainEntry,
  type LoggedEffect,
} from '../price-book/change-log-chain';
import type { PriceChangeKind } from '../price-book/format-history';
import { inBatches, rows } from './price-book-rows';

// The change log's rows as a chain (price-book/change-log-chain.ts): every write appends its rows
// with what each did (`effect`) and its hash, linked to the last row's hash. Writes hold the price
// book lock, so that the head they read is the last row, and ids follow the chain's order.

/** A row a write appends to the change log: what changed, and what the write left stored. */
export interface LogChange {
  readonly change: PriceChangeKind;
  readonly productKey: string;
  readonly organizationId: string | null;
  /** The record the row names, in decimal. */
  readonly priceRecordId: string | null;
  /** What an availability change set; null for the other kinds. */
  readonly onSale: boolean | null;
  readonly effect: LoggedEffect;
}

/** The hash of the change log's last row: the chain's head (CHAIN_START for an empty log). */
export async function chainHead(db: EntityManager): Promise<string> {
  const [last] = await rows<{ hash: string | null }>(db, `SELECT hash FROM price_change ORDER BY id DESC LIMIT 1`);
  return last?.hash ?? CHAIN_START;
}

/**
 * Appends `changes` to the change log, in their order, as rows of one write at `instant` by
 * `author`: each with its effect and its hash, chained from the head. Called under the price book
 * lock (PriceBookWrites.lock). Bulk statements of BATCH rows, their ids in the rows' order.
 */
export async function appendToLog(
  db: EntityManager,
  changes: readonly LogChange[],
  instant: Date,
  author: Author,
): Promise<void> {
  let previous = await chainHead(db);
  // What is stored: the write's instant is whole milliseconds (PriceBookWrites.lock), sent as such.
  const changedAt = loggedInstant(instant.getTime());
  await inBatches(changes, (batch) => {
    const effects: string[] = [];
    const hashes: string[] = [];
    for (const change of batch) {
      const entry: ChainEntry = {
        changedAt,
        change: change.change,
        productKey: change.productKey,
        organizationId: change.organizationId,
        priceRecordId: change.priceRecordId,
        actor: author.actor,
        reason: author.reason,
        onSale: change.onSale,
        effect: change.effect,
      };
      previous = entryHash(previous, entry);
      hashes.push(previous);
      effects.push(canonicalJson(change.effect));
    }
    return db.query(
      `INSERT INTO price_change (changed_at, actor, reason, product_key, organization_id, change, price_record_id,
                                 on_sale, effect, hash)
       SELECT $1, $2, $3, product_key, organization_id, change, price_record_id, on_sale, effect::jsonb, hash
         FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::boolean[], $9::text[], $10::text[])
              WITH ORDINALITY AS t(product_key, organization_id, change, price_record_id, on_sale, effect, hash, ord)
        ORDER BY ord`,
      [
        instant,
        author.actor,
        author.reason,
        batch.map((c) => c.productKey),
        batch.map((c) => c.organizationId),
        batch.map((c) => c.change),
        batch.map((c) => c.priceRecordId),
        batch.map((c) => c.onSale),
        effects,
        hashes,
      ],
    );
  });
}
