import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { PriceRecord } from '../core/price-record';
import { isLoggedEffect, type LoggedRecord } from '../price-book/change-log-chain';
import type { ListWrite } from '../core/list-history';
import { PRICE_BOOK_LOCK } from './price-book-writes';
import type { PriceBookHead, PricingChanges, PricingData } from './pricing-data';
import {
  epochMs,
  forEachPage,
  readAvailability,
  HELD_RECORD_COLUMNS,
  rows,
  toPriceRecord,
  type PriceChangeRow,
  type PriceRecordRow,
} from './price-book-rows';
import { StringPool } from './string-pool';

/**
 * What the prices held in memory are read from (snapshot/price-book-loader.ts): every price at
 * start-up, then what changed since, and the version to poll. Each read runs in a snapshot of its
 * own (REPEATABLE READ), in pages; the strings that repeat across records are shared.
 */
@Injectable()
export class PriceSnapshotReads {
  /** The product keys, organization ids, unit types and amounts of the prices held, each once. */
  private readonly pool = new StringPool();

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Everything pricing serves; with `listOnly`, every record but organizations' prices (and
   * `listOnly` in the result), which a book of a million records reads in a fraction of the time.
   */
  loadPricingData({ listOnly = false }: { listOnly?: boolean } = {}): Promise<PricingData> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      const head = await readHead(db);
      const records = await this.readRecords(db, listOnly ? 'organization_id IS NULL' : undefined);
      const availability = await readAvailability(db);
      const listLog = await this.readListLog(db, '0');
      return { records, availability, listWrites: writeInstants(listLog), listLog, ...head, listOnly };
    });
  }

  /**
   * What was written after the change `sinceChangeId`: every record of the product keys those
   * changes name (all scopes; a withdrawn record is simply absent), the new list writes,
   * availability and the version. Ended history of other keys is not read again. Writes take the
   * price book lock before their change ids, so ids grow in commit order and nothing committed
   * later can appear below `sinceChangeId`.
   */
  loadChangesSince(sinceChangeId: string): Promise<PricingChanges> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      const [summary] = await rows<{ writes: number; records: number; since_changed_at: number | null }>(
        db,
        `SELECT count(DISTINCT changed_at)::int AS writes,
                (SELECT record_count FROM price_book_version)::int AS records,
                (SELECT ${epochMs('changed_at', 'since_changed_at')} FROM price_change WHERE id = $1::bigint)
           FROM price_change WHERE id > $1::bigint`,
        [sinceChangeId],
      );
      const head = await readHead(db);
      const keys = await rows<Pick<PriceChangeRow, 'product_key'>>(
        db,
        `SELECT DISTINCT product_key FROM price_change WHERE id > $1::bigint`,
        [sinceChangeId],
      );
      const productKeys = keys.map((k) => k.product_key);
      const records = keys.length === 0 ? [] : await this.readRecords(db, `product_key = ANY($2::text[])`, productKeys);
      const listLog = await this.readListLog(db, sinceChangeId);
      return {
        sinceChangeId,
        productKeys,
        records,
        availability: await readAvailability(db),
        listWrites: writeInstants(listLog),
        listLog,
        ...head,
        sinceChangedAt: summary.since_changed_at,
        writeCount: summary.writes,
        recordCount: summary.records,
      };
    });
  }

  /**
   * Where the price book stands, cheap to poll: its version and latest change, and the instant
   * (epoch ms, the database's clock) before which no write can commit any more: now, or the start
   * of the transaction of a write in progress (it holds the price book's lock, and writes at an
   * instant after its start); `null` when a holder of the lock cannot be seen (another role's
   * session): then nothing is known to be settled. That instant is read first, so that a snapshot
   * at this head holds every write before it.
   */
  async readHead(): Promise<PriceBookHead & { settledBefore: number | null }> {
    const db = this.dataSource.manager;
    const [{ settled_before: settledBefore }] = await rows<{ settled_before: number | null }>(
      db,
      `SELECT CASE WHEN bool_and(a.xact_start IS NOT NULL) IS FALSE THEN NULL
                   ELSE (extract(epoch FROM least(clock_timestamp(), min(a.xact_start))) * 1000)::float8
              END AS settled_before
         FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 1`,
      // A bigint advisory key shows in pg_locks as its high and low 32 bits.
      [Math.floor(PRICE_BOOK_LOCK / 2 ** 32), PRICE_BOOK_LOCK % 2 ** 32],
    );
    return { ...(await readHead(db)), settledBefore };
  }

  /**
   * The change log's rows of list prices after the row `afterChangeId`, in id order, with their
   * effects: a page at a time through the index of the list's rows (price_change_list_log).
   */
  private async readListLog(db: EntityManager, afterChangeId: string): Promise<ListWrite[]> {
    const entries: ListWrite[] = [];
    await forEachPage<ListLogRow>(
      db,
      {
        columns: `price_change.id::float8 AS id, ${epochMs('changed_at')}, change, effect`,
        table: 'price_change',
        where: `price_change.id > $2::bigint AND organization_id IS NULL AND change <> 'availability'`,
        parameters: [afterChangeId],
      },
      (page) => {
        for (const row of page) {
          const effect = isLoggedEffect(row.effect) ? row.effect : undefined;
          entries.push({
            at: row.changed_at,
            ...(row.change === 'set' && effect?.record && { set: endOf(effect.record) }),
            ...(effect?.ends && { ends: effect.ends.map(endOf) }),
          });
        }
      },
    );
    return entries;
  }

  /** The records `where` selects (all by default; its parameter is $2), each page mapped as it is read. */
  private async readRecords(db: EntityManager, where?: string, parameter?: unknown): Promise<PriceRecord[]> {
    const records: PriceRecord[] = [];
    const intern = <T extends string | null>(text: T): T => this.pool.intern(text);
    const parameters = parameter === undefined ? [] : [parameter];
    await forEachPage<PriceRecordRow>(
      db,
      { columns: HELD_RECORD_COLUMNS, table: 'price_record', where, parameters },
      (page) => {
        for (const row of page) records.push(toPriceRecord(row, intern));
      },
    );
    return records;
  }
}

/** The version and the latest entry of the change log (by its primary key: one index step). */
async function readHead(db: EntityManager): Promise<PriceBookHead> {
  const [head] = await rows<{ version: string; last_change_id: string | null; last_changed_at: number | null }>(
    db,
    `SELECT v.version::text AS version, c.id::text AS last_change_id, c.last_changed_at
       FROM price_book_version v
       LEFT JOIN LATERAL (SELECT id, ${epochMs('changed_at', 'last_changed_at')}
                            FROM price_change ORDER BY id DESC LIMIT 1) c ON true`,
  );
  return { version: head.version, lastChangeId: head.last_change_id ?? '0', lastChangedAt: head.last_changed_at };
}

/** The instants (epoch ms) of the list's writes in `listLog`, each once, ascending: for `last_changed`. */
function writeInstants(listLog: readonly ListWrite[]): number[] {
  return [...new Set(listLog.map((write) => write.at))].sort((a, b) => a - b);
}

/** A record of an entry's effect as the list's past needs it: its id and its end, in epoch ms. */
function endOf(record: LoggedRecord): { id: number; validUntil: number | null } {
  const until = record.valid_until;
  // Epoch microseconds as text; anything else (`infinity`, a hand-written row) counts as no end.
  const validUntil = until !== null && /^-?\d+$/.test(until) ? Number(BigInt(until) / 1000n) : null;
  return { id: Number(record.id), validUntil };
}

type ListLogRow = Pick<PriceChangeRow, 'id' | 'changed_at' | 'change' | 'effect'>;
