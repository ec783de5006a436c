import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { PriceRecord } from '../core/price-record';
import { isLoggedEffect } from '../price-book/change-log-chain';
import type { ListLogEntry, PricingChanges, PricingData } from './pricing-data';
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
      const listLog = await this.readListLog(db, '0');
      const version = await readVersion(db);
      return { records, availability, listWrites, listLog, version, lastChangeId, listOnly };
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
        listLog: await this.readListLog(db, sinceChangeId),
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
   * The change log's rows of list prices after the row `afterChangeId`, in id order, with their
   * effects: a page at a time through the index of the list's rows (price_change_list_log).
   */
  private async readListLog(db: EntityManager, afterChangeId: string): Promise<ListLogEntry[]> {
    const entries: ListLogEntry[] = [];
    await forEachPage<ListLogRow>(
      db,
      {
        columns: `price_change.id::float8 AS id, ${epochMs('changed_at')}, change, product_key,
                  price_record_id::float8 AS price_record_id, effect`,
        table: 'price_change',
        where: `price_change.id > $2::bigint AND organization_id IS NULL AND change <> 'availability'`,
        parameters: [afterChangeId],
      },
      (page) => {
        for (const row of page) {
          entries.push({
            at: row.changed_at,
            change: row.change,
            productKey: this.pool.intern(row.product_key),
            recordId: row.price_record_id,
            effect: isLoggedEffect(row.effect) ? row.effect : null,
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
      { columns: RECORD_COLUMNS, table: 'price_record', where, parameters },
      (page) => {
        for (const row of page) records.push(toPriceRecord(row, intern));
      },
    );
    return records;
  }
}

/** A row of the list's change log, as readListLog reads it. */
type ListLogRow = Pick<PriceChangeRow, 'id' | 'changed_at' | 'change' | 'product_key' | 'price_record_id' | 'effect'>;

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
