import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { PriceRecord } from '../core/price-record';
import { PRICE_BOOK_LOCK } from './price-book-writes';
import type { PricingChanges, PricingData } from './pricing-data';
import {
  epochMs,
  forEachPage,
  readAvailability,
  readVersion,
  RECORD_COLUMNS,
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
      const [{ last_change_id: lastChangeId }] = await rows<{ last_change_id: string }>(
        db,
        `SELECT coalesce(max(id), 0)::text AS last_change_id FROM price_change`,
      );
      const records = await this.readRecords(db, listOnly ? 'organization_id IS NULL' : undefined);
      const availability = await readAvailability(db);
      const listWrites = await readListWrites(db, '0');
      const version = await readVersion(db);
      return { records, availability, listWrites, version, lastChangeId, listOnly };
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
      const [summary] = await rows<{ last_change_id: string; writes: number; records: number }>(
        db,
        `SELECT coalesce(max(id), $1::bigint)::text AS last_change_id,
                count(DISTINCT changed_at)::int AS writes,
                (SELECT record_count FROM price_book_version)::int AS records
           FROM price_change WHERE id > $1::bigint`,
        [sinceChangeId],
      );
      const keys = await rows<Pick<PriceChangeRow, 'product_key'>>(
        db,
        `SELECT DISTINCT product_key FROM price_change WHERE id > $1::bigint`,
        [sinceChangeId],
      );
      const productKeys = keys.map((k) => k.product_key);
      const records = keys.length === 0 ? [] : await this.readRecords(db, `product_key = ANY($2::text[])`, productKeys);
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

  /**
   * The counter every write moves, and the instant (epoch ms, the database's clock) before which
   * no write can commit any more: now, or the start of the transaction of a write in progress (it
   * holds the price book's lock, and writes at an instant after its start). `null` when a holder
   * of the lock cannot be seen (another role's session): then nothing is known to be settled.
   * Cheap to poll.
   */
  async readVersion(): Promise<{ version: string; settledBefore: number | null }> {
    const [row] = await rows<{ version: string; settled_before: number | null }>(
      this.dataSource.manager,
      `SELECT version::text,
              CASE WHEN bool_and(a.xact_start IS NOT NULL) FILTER (WHERE l.pid IS NOT NULL) IS FALSE THEN NULL
                   ELSE (extract(epoch FROM least(clock_timestamp(), min(a.xact_start))) * 1000)::float8
              END AS settled_before
         FROM price_book_version
         LEFT JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted
                             AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 1
         LEFT JOIN pg_stat_activity a ON a.pid = l.pid
        GROUP BY version`,
      // A bigint advisory key shows in pg_locks as its high and low 32 bits.
      [Math.floor(PRICE_BOOK_LOCK / 2 ** 32), PRICE_BOOK_LOCK % 2 ** 32],
    );
    return { version: row.version, settledBefore: row.settled_before };
  }

  /** The records `where` selects (all by default; its parameter is $2), each page mapped as it is read. */
  private async readRecords(db: EntityManager, where?: string, parameter?: unknown): Promise<PriceRecord[]> {
    const records: PriceRecord[] = [];
    const intern = <T extends string | null>(text: T): T => this.pool.intern(text);
    const parameters = parameter === undefined ? [] : [parameter];
    await forEachPage<PriceRecordRow>(
      db,
      { columns: RECORD_COLUMNS, table: 'price_record', where, parameters },
      (page) => {
        for (const row of page) records.push(toPriceRecord(row, intern));
      },
    );
    return records;
  }
}

/** Instants (epoch ms) of list-price writes after the change `afterChangeId`, for `last_changed`. */
async function readListWrites(db: EntityManager, afterChangeId: string): Promise<number[]> {
  const writes = await rows<Pick<PriceChangeRow, 'changed_at'>>(
    db,
    `SELECT DISTINCT ${epochMs('changed_at')} FROM price_change
      WHERE id > $1::bigint AND organization_id IS NULL AND change <> 'availability' ORDER BY changed_at`,
    [afterChangeId],
  );
  return writes.map((w) => w.changed_at);
}
