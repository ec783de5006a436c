import type { MigrationInterface, QueryRunner } from 'typeorm';
import {
  canonicalJson,
  CHAIN_START,
  entryHash,
  type LoggedEffect,
  type LoggedRecord,
} from '../../price-book/change-log-chain';
import { entryOf, type EntryColumns } from '../change-log';
import { loggedRecordColumns, loggedRecordOf, microsText, PAGE } from '../price-book-rows';

/**
 * The change log as a hash chain (price-book/change-log-chain.ts; docs/decisions.md, "A change log
 * that proves itself"): on every row of price_change, `effect`, what its write did (the records
 * it wrote or ended, as stored; the availability it set), and `hash`, the SHA-256 of its canonical
 * bytes and the previous row's hash, so that `npm run pricing -- verify` can check every link and
 * replay the log into the book.
 *
 * The rows written before are chained as they stand, in id order: their effects are filled from
 * the book as it is now, so that replaying the log gives exactly the stored book (a `set` or an end
 * holds its record as it is now; one whose record is gone, a withdrawal, holds none; an
 * availability change that did not record what it set holds the product's availability now), each
 * marked `before_chain`. Read in pages and written in bulk statements of PAGE rows: a log of a
 * million rows takes a statement per page, each well within the migration's time limit. Only here
 * is the log's append-only trigger set aside (and its NOT VALID constraints, which an UPDATE would
 * check on the rows written before them), and set back: the trigger to fire in every session
 * (ALWAYS).
 *
 * From now on every row carries both (`price_change_sealed`, named to be checked after the other
 * CHECK constraints of the table, which PostgreSQL checks in the order of their names: a row
 * that breaks one of those is refused for it); and an index of the list's rows by id, which the
 * prices in memory read with their effects (PriceSnapshotReads, `listLog`).
 */
export class ChangeLogChain1764000010000 implements MigrationInterface {
  name = 'ChangeLogChain1764000010000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE price_change ADD COLUMN effect jsonb NULL, ADD COLUMN hash text NULL`);
    await db.query(`ALTER TABLE price_change DISABLE TRIGGER price_change_append_only`);
    // The NOT VALID constraints (an actor, what an availability change set) hold for rows written
    // since them, and PostgreSQL checks them on every row an UPDATE writes: set aside while the
    // rows written before them get their effect, then added back as they were.
    const notValid = (await db.query(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
        WHERE conrelid = 'price_change'::regclass AND NOT convalidated ORDER BY conname`,
    )) as { name: string; definition: string }[];
    for (const { name } of notValid) await db.query(`ALTER TABLE price_change DROP CONSTRAINT ${name}`);
    let previous = CHAIN_START;
    let after = '0';
    for (;;) {
      const page = (await db.query(
        `SELECT c.id::text AS id, ${microsText('c.changed_at')} AS changed_at, c.product_key, c.organization_id,
                c.change, c.price_record_id::text AS price_record_id, c.actor, c.reason, c.on_sale,
                a.on_sale AS available, ${loggedRecordColumns('r', 'record_')}
           FROM price_change c
           LEFT JOIN price_record r ON r.id = c.price_record_id
           LEFT JOIN product_availability a ON c.change = 'availability' AND a.product_key = c.product_key
          WHERE c.id > $1::bigint ORDER BY c.id LIMIT ${PAGE}`,
        [after],
      )) as BeforeChainRow[];
      if (page.length === 0) break;
      const effects: string[] = [];
      const hashes: string[] = [];
      for (const row of page) {
        const effect = effectBeforeChain(row);
        const entry = entryOf(row, effect);
        const effectJson = canonicalJson(effect);
        previous = entryHash(previous, entry, effectJson);
        effects.push(effectJson);
        hashes.push(previous);
      }
      // The effects as one JSON array, as appendToLog sends them (change-log.ts).
      await db.query(
        `UPDATE price_change SET effect = e.effect, hash = chained.hash
           FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS chained(id, hash, ord)
           JOIN jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(effect, ord) ON e.ord = chained.ord
          WHERE price_change.id = chained.id`,
        [page.map((row) => row.id), hashes, `[${effects.join(',')}]`],
      );
      if (page.length < PAGE) break;
      after = page[page.length - 1].id;
    }
    for (const { name, definition } of notValid) {
      await db.query(`ALTER TABLE price_change ADD CONSTRAINT ${name} ${definition}`);
    }
    await db.query(`ALTER TABLE price_change ENABLE ALWAYS TRIGGER price_change_append_only`);
    await db.query(`
      ALTER TABLE price_change ADD CONSTRAINT price_change_sealed
        CHECK (effect IS NOT NULL AND jsonb_typeof(effect) = 'object' AND hash IS NOT NULL
               AND hash ~ '^[0-9a-f]{64}$')`);
    await db.query(
      `CREATE INDEX price_change_list_log ON price_change (id) WHERE organization_id IS NULL AND change <> 'availability'`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX price_change_list_log`);
    await db.query(`
      ALTER TABLE price_change
        DROP CONSTRAINT price_change_sealed,
        DROP COLUMN hash,
        DROP COLUMN effect`);
  }
}

/** A row of the log before the chain, with the record it names and the availability of its product now. */
interface BeforeChainRow extends EntryColumns {
  readonly id: string;
  readonly available: boolean | null;
  readonly record_id: string | null;
  readonly [column: string]: unknown;
}

/** What a row written before the chain is taken to have done: what the book holds of it now. */
function effectBeforeChain(row: BeforeChainRow): LoggedEffect {
  const record: LoggedRecord | undefined = row.record_id === null ? undefined : loggedRecordOf(row, 'record_');
  switch (row.change) {
    case 'set':
      return record ? { before_chain: true, record } : { before_chain: true };
    case 'end':
    case 'withdraw_end':
      return record ? { before_chain: true, ends: [record] } : { before_chain: true };
    case 'availability': {
      const onSale = row.on_sale ?? row.available;
      return onSale === null ? { before_chain: true } : { before_chain: true, on_sale: onSale };
    }
    default:
      // withdraw_price: its record is gone; the records it reopened are in their own rows as they are now.
      return { before_chain: true };
  }
}
