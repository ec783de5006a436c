import type { EntityManager } from 'typeorm';
import { escapeWord } from '../errors/bounded-text';
import type { Author } from '../price-book/author';
import {
  canonicalJson,
  type ChainEntry,
  type ChainRule,
  type LoggedEffect,
  type LoggedRecord,
} from '../price-book/change-log-chain';
import { ChainVerifier } from '../price-book/change-log-replay';
import type { PriceChangeKind } from '../price-book/price-history';
import type { Progress } from '../price-book/progress';
import { forEachPage, inBatches, loggedRecordColumns, microsText, readAvailability, rows } from './price-book-rows';

// The change log's rows as a chain (price-book/change-log-chain.ts): every write appends its rows
// with what each did (`effect`); the database links each to the last row's hash. Writes hold the
// price book lock, so that ids follow the chain's order.

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

/**
 * Appends `changes` to the change log, in their order, as rows of one write by `author`: each with
 * its effect. The database gives each row its id, its instant (the write's publication instant) and
 * its hash, chained from the last row (the log's trigger, OneClock1764000011000): nothing the
 * writer says of them is kept. Bulk statements of BATCH rows, the rows in their order.
 */
export async function appendToLog(db: EntityManager, changes: readonly LogChange[], author: Author): Promise<void> {
  await inBatches(changes, (batch) =>
    // The effects as one JSON array: a text[] of JSON would escape every quote of it, twice as slow.
    db.query(
      `INSERT INTO price_change (actor, reason, product_key, organization_id, change, price_record_id, on_sale, effect)
       SELECT $1, $2, t.product_key, t.organization_id, t.change, t.price_record_id, t.on_sale, e.effect
         FROM unnest($3::text[], $4::text[], $5::text[], $6::bigint[], $7::boolean[])
              WITH ORDINALITY AS t(product_key, organization_id, change, price_record_id, on_sale, ord)
         JOIN jsonb_array_elements($8::jsonb) WITH ORDINALITY AS e(effect, ord) ON e.ord = t.ord
        ORDER BY t.ord`,
      [
        author.actor,
        author.reason,
        batch.map((c) => c.productKey),
        batch.map((c) => c.organizationId),
        batch.map((c) => c.change),
        batch.map((c) => c.priceRecordId),
        batch.map((c) => c.onSale),
        `[${batch.map((c) => canonicalJson(c.effect)).join(',')}]`,
      ],
    ),
  );
}

/**
 * What `verify` found: the entries checked and the chain's head, and every problem found (the
 * entries that do not check out, then the first product key whose stored book differs from the
 * log's); the log proves the book when there is none.
 */
export interface LogVerification {
  readonly entries: number;
  readonly head: string;
  readonly problems: readonly string[];
}

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
  readonly chain_rule: ChainRule;
  /** As stored: whatever the row holds (ChainVerifier says when it is not an effect). */
  readonly effect: ChainEntry['effect'];
  readonly hash: string | null;
}

const LOG_COLUMNS = `price_change.id::text AS id, ${microsText('changed_at')} AS changed_at, product_key,
  organization_id, change, price_record_id::text AS price_record_id, actor, reason, on_sale, effect, hash,
  chain_rule::int AS chain_rule`;

/**
 * Checks the change log and the book in `db`'s snapshot (`npm run pricing -- verify`): every
 * entry in id order, its hash recomputed from its content and the previous one's (ChainVerifier),
 * its effect replayed; then every stored record and the availability compared with the book the
 * log gives. Every problem is reported, the check going on past it. Pages of PAGE rows: a million
 * entries and records are read, only the replayed book held.
 */
export async function verifyLog(db: EntityManager, progress: Progress): Promise<LogVerification> {
  const [{ entries, records }] = await rows<{ entries: number; records: number }>(
    db,
    `SELECT (SELECT count(*) FROM price_change)::float8 AS entries,
            (SELECT count(*) FROM price_record)::float8 AS records`,
  );
  const verifier = new ChainVerifier();
  const problems: string[] = [];
  progress.start('checking the change log', entries, 'entries');
  await forEachPage<LogRow>(db, { columns: LOG_COLUMNS, table: 'price_change' }, (page) => {
    for (const row of page) {
      const problem = verifier.check({
        id: row.id,
        entry: entryOf(row, row.effect),
        hash: row.hash,
        rule: row.chain_rule === 2 ? 2 : 1,
      });
      if (problem !== undefined) problems.push(...problem.split('\n'));
    }
    progress.update(verifier.entries);
  });
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
    problems.push(`the book differs from its log at ${escapeWord(difference.productKey)}: ${difference.what}`);
  }
  return { entries: verifier.entries, head: verifier.head, problems };
}
