import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { PriceRecord } from '../core/price-record';
import type { LoggedChange, PriceHistory } from '../price-book/price-history';
import { NO_PROGRESS, type Progress } from '../price-book/progress';
import { verifyLog, type LogVerification } from './change-log';
import type { RecordsRead } from './pricing-data';
import { readRecordsWithEnds } from './price-snapshot-reads';
import {
  CHANGE_COLUMNS,
  forEachPage,
  HISTORY_RECORD_COLUMNS,
  readAvailability,
  RECORD_COLUMNS,
  rows,
  toHistoryRecord,
  toPriceChange,
  toPriceRecord,
  type HistoryRecordRow,
  type PriceChangeRow,
  type PriceRecordRow,
} from './price-book-rows';

/** The whole stored price book: every record and the availability of products. */
export interface StoredBook {
  readonly records: readonly PriceRecord[];
  readonly availability: ReadonlyMap<string, boolean>;
}

/** Which changes of the log (`changes`): instants in [since, until) (epoch ms, either open), one product key, the last n. */
export interface ChangesRange {
  readonly since?: number;
  readonly until?: number;
  readonly productKey?: string;
  /** Only the last this many of the selection (still given oldest first). */
  readonly last?: number;
}

/**
 * Operators' reads of the price book (export, history, changes), each in a snapshot of its own
 * (REPEATABLE READ).
 */
@Injectable()
export class PriceBookReads {
  constructor(private readonly dataSource: DataSource) {}

  /** The whole price book. */
  readBook(): Promise<StoredBook> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      const records: PriceRecord[] = [];
      await forEachPage<PriceRecordRow>(db, { columns: RECORD_COLUMNS, table: 'price_record' }, (page) => {
        for (const row of page) records.push(toPriceRecord(row));
      });
      return { records, availability: await readAvailability(db) };
    });
  }

  /** The availability of products (a product not listed is on sale once it has a list price). */
  availability(): Promise<Map<string, boolean>> {
    return readAvailability(this.dataSource.manager);
  }

  /**
   * Every record of one key and scope (`organizationId` null: the list price), its change log with
   * the product's availability changes (which concern every scope), and its availability now.
   */
  history(productKey: string, organizationId: string | null): Promise<PriceHistory> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      const scope = organizationId === null ? 'organization_id IS NULL' : 'organization_id = $2';
      const parameters = organizationId === null ? [productKey] : [productKey, organizationId];
      const records = await rows<HistoryRecordRow>(
        db,
        `SELECT ${HISTORY_RECORD_COLUMNS} FROM price_record WHERE product_key = $1 AND ${scope}
          ORDER BY price_record.valid_from, price_record.id`,
        parameters,
      );
      const changes = await rows<PriceChangeRow>(
        db,
        `SELECT ${CHANGE_COLUMNS} FROM price_change
          WHERE product_key = $1 AND ((${scope} AND change <> 'availability') OR change = 'availability')
          ORDER BY price_change.changed_at, price_change.id`,
        parameters,
      );
      const [availability] = await rows<{ on_sale: boolean }>(
        db,
        `SELECT on_sale FROM product_availability WHERE product_key = $1`,
        [productKey],
      );
      return {
        records: records.map(toHistoryRecord),
        changes: changes.map(toPriceChange),
        onSale: availability?.on_sale ?? true,
      };
    });
  }

  /**
   * Every record of `productKeys`: their list prices, and the prices agreed with `organizationIds`
   * (`focus`: the prices usage of those keys and organizations is priced at), in one snapshot.
   */
  recordsOf(productKeys: readonly string[], organizationIds: readonly string[]): Promise<RecordsRead> {
    return this.dataSource.transaction('REPEATABLE READ', (db) =>
      readRecordsWithEnds(
        db,
        `product_key = ANY($1::text[]) AND (organization_id IS NULL OR organization_id = ANY($2::text[]))`,
        [[...productKeys], [...organizationIds]],
      ),
    );
  }

  /**
   * Checks the change log's chain and the book against it, in one snapshot (change-log.ts,
   * verifyLog), reporting to `progress`.
   */
  verify(progress: Progress = NO_PROGRESS): Promise<LogVerification> {
    return this.dataSource.transaction('REPEATABLE READ', (db) => verifyLog(db, progress));
  }

  /**
   * The change log of every key and scope with `changedAt` in [since, until) (epoch ms, either
   * open), oldest first, given to `consume` a page at a time, each change with what its write did.
   */
  changes(range: ChangesRange, consume: (page: readonly LoggedChange[]) => void | Promise<void>): Promise<void> {
    const where =
      `($1::timestamptz IS NULL OR changed_at >= $1) AND ($2::timestamptz IS NULL OR changed_at < $2) ` +
      `AND ($3::text IS NULL OR product_key = $3)`;
    const parameters = [instantParameter(range.since), instantParameter(range.until), range.productKey ?? null];
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      // The last n: from the id of the n-th newest on (ids follow the log's order), still paged.
      let from: string | null = null;
      if (range.last !== undefined) {
        const [row] = await rows<{ id: string | null }>(
          db,
          `SELECT min(id)::text AS id FROM (SELECT id FROM price_change WHERE ${where} ORDER BY id DESC LIMIT $4) last`,
          [...parameters, range.last],
        );
        if (row.id === null) return;
        from = row.id;
      }
      // Change ids grow with changed_at (every write takes the price book lock first): in id order.
      await forEachPage<PriceChangeRow>(
        db,
        {
          columns: CHANGE_COLUMNS,
          table: 'price_change',
          where: `${where} AND ($4::bigint IS NULL OR id >= $4::bigint)`,
          parameters: [...parameters, from],
        },
        async (page) => {
          await consume(
            page.map((row) => ({
              ...toPriceChange(row),
              productKey: row.product_key,
              organizationId: row.organization_id,
              onSale: row.on_sale,
            })),
          );
        },
      );
    });
  }
}

/** An instant (epoch ms) as a timestamptz parameter. */
function instantParameter(ms: number | undefined): Date | null {
  return ms === undefined ? null : new Date(ms);
}
