import type { EntityManager } from 'typeorm';
import { escapeWord } from '../errors/bounded-text';
import type { Author } from '../price-book/author';
import {
  canonicalJson,
  CHAIN_START,
  entryHash,
  loggedInstant,
  type ChainEntry,
  type LoggedEffect,
  type LoggedRecord,
} from '../price-book/change-log-chain';
import { ChainVerifier } from '../price-book/change-log-replay';
import type { PriceChangeKind } from '../price-book/format-history';
import type { Progress } from '../price-book/progress';
import { forEachPage, inBatches, loggedRecordColumns, microsText, readAvailability, rows } from './price-book-rows';

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
async function chainHead(db: EntityManager): Promise<string> {
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
      const effect = canonicalJson(change.effect);
      previous = entryHash(previous, entry, effect);
      hashes.push(previous);
      effects.push(effect);
    }
    // The effects as one JSON array: a text[] of JSON would escape every quote of it, twice as slow.
    return db.query(
      `INSERT INTO price_change (changed_at, actor, reason, product_key, organization_id, change, price_record_id,
                                 on_sale, effect, hash)
       SELECT $1, $2, $3, t.product_key, t.organization_id, t.change, t.price_record_id, t.on_sale, e.effect, t.hash
         FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::boolean[], $9::text[])
              WITH ORDINALITY AS t(product_key, organization_id, change, price_record_id, on_sale, hash, ord)
         JOIN jsonb_array_elements($10::jsonb) WITH ORDINALITY AS e(effect, ord) ON e.ord = t.ord
        ORDER BY t.ord`,
      [
        instant,
        author.actor,
        author.reason,
        batch.map((c) => c.productKey),
        batch.map((c) => c.organizationId),
        batch.map((c) => c.change),
        batch.map((c) => c.priceRecordId),
        batch.map((c) => c.onSale),
        hashes,
        `[${effects.join(',')}]`,
      ],
    );
  });
}

/** What `verify` found: the log checks out (its entries and head), or the first thing that does not. */
export type LogVerification =
  { readonly entries: number; readonly head: string } | { readonly entries: number; readonly problem: string };

/** The columns of a row of price_change an entry is made of, as text (`changed_at` as microsText). */
export interface EntryColumns {
  readonly changed_at: string;
  readonly product_key: string;
  readonly organization_id: string | null;
  readonly change: string;
  readonly price_record_id: string | null;
  readonly actor: string | null;
  readonly reason: string | null;
  readonly on_sale: boolean | null;
}

/** The entry a row of price_change is, with `effect`. */
export function entryOf(row: EntryColumns, effect: ChainEntry['effect']): ChainEntry {
  return {
    changedAt: row.changed_at,
    change: row.change,
    productKey: row.product_key,
    organizationId: row.organization_id,
    priceRecordId: row.price_record_id,
    actor: row.actor,
    reason: row.reason,
    onSale: row.on_sale,
    effect,
  };
}

/** A row of price_change as the chain hashes it. */
interface LogRow extends EntryColumns {
  readonly id: string;
  /** As stored: whatever the row holds (ChainVerifier says when it is not an effect). */
  readonly effect: ChainEntry['effect'];
  readonly hash: string | null;
}

const LOG_COLUMNS = `price_change.id::text AS id, ${microsText('changed_at')} AS changed_at, product_key,
  organization_id, change, price_record_id::text AS price_record_id, actor, reason, on_sale, effect, hash`;

/**
 * Checks the change log and the book in `db`'s snapshot (`npm run pricing -- verify`): every
 * entry in id order, its hash recomputed from its content and the previous one's (ChainVerifier),
 * its effect replayed; then every stored record and the availability compared with the book the
 * log gives. Stops at the first entry that does not check out. Pages of PAGE rows: a million
 * entries and records are read, only the replayed book held.
 */
export async function verifyLog(db: EntityManager, progress: Progress): Promise<LogVerification> {
  const [{ entries, records }] = await rows<{ entries: number; records: number }>(
    db,
    `SELECT (SELECT count(*) FROM price_change)::float8 AS entries,
            (SELECT count(*) FROM price_record)::float8 AS records`,
  );
  const verifier = new ChainVerifier();
  let problem: string | undefined;
  progress.start('checking the change log', entries, 'entries');
  await forEachPage<LogRow>(db, { columns: LOG_COLUMNS, table: 'price_change' }, (page) => {
    for (const row of page) {
      problem = verifier.check({ id: row.id, entry: entryOf(row, row.effect), hash: row.hash });
      if (problem !== undefined) return false;
    }
    progress.update(verifier.entries);
    return true;
  });
  if (problem !== undefined) return { entries: verifier.entries, problem };
  const comparison = verifier.replay.comparison();
  progress.start('comparing the book with it', records, 'records');
  let compared = 0;
  // The columns are named as a LoggedRecord's fields: a row is one.
  await forEachPage<LoggedRecord>(db, { columns: loggedRecordColumns(), table: 'price_record' }, (page) => {
    comparison.add(page);
    progress.update((compared += page.length));
  });
  const difference = comparison.firstDifference(await readAvailability(db));
  if (difference) {
    return {
      entries: verifier.entries,
      problem: `the book differs from its log at ${escapeWord(difference.productKey)}: ${difference.what}`,
    };
  }
  return { entries: verifier.entries, head: verifier.head };
}
