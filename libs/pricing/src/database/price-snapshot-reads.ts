import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { EndTable, type EndTableBuilder } from '../core/end-table';
import type { ListWrite } from '../core/list-history';
import { presentCut } from '../core/present-cut';
import type { PriceRecord } from '../core/price-record';
import { inSlices, type Steps } from '../core/slices';
import type { PriceBookHead, PricingChanges, PricingData, ReadHead, RecordsRead } from './pricing-data';
import {
  epochMs,
  forEachFetched,
  forEachPage,
  readAvailability,
  PACKED_HELD_RECORD,
  rows,
  PackedRecordReader,
  type PackedRecordRow,
} from './price-book-rows';
import { StringPool } from './string-pool';

/**
 * What the prices held in memory are read from (snapshot/price-book-loader.ts): every price at
 * start-up, then what changed since, and the head to poll. Each read runs in a snapshot of its own
 * (REPEATABLE READ), its head read first, through cursors (planned once: forEachPage); the strings
 * that repeat across records are shared.
 *
 * The list's past is read from the records (docs/decisions.md, "One clock"): each is recorded at its
 * write's publication instant, and keeps when its end last changed and from what; only the few
 * prices whose end changed more than once (a withdrawn scheduled change, then another) are replayed
 * from the change log.
 */
@Injectable()
export class PriceSnapshotReads {
  /** The product keys, organization ids, unit types and amounts of the prices held, each once. */
  private readonly pool = new StringPool();

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Everything pricing serves; with `listOnly`, every record but organizations' prices (and
   * `listOnly` in the result), which a book of a million records reads in a fraction of the time.
   * With `presentFirst` too, a list whose past holds three writes or more is read from its present
   * on (`present` in the result: core/present-cut.ts), the list prices whose listing may reach the
   * cut; the rest comes with organizations' prices (loadPastAndOrganizationPrices).
   */
  loadPricingData({
    listOnly = false,
    presentFirst = false,
  }: { listOnly?: boolean; presentFirst?: boolean } = {}): Promise<PricingData> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      const head = await readHead(db);
      const listWrites = await readListWrites(db);
      const present =
        listOnly && presentFirst ? await pastWorthLeaving(db, presentCut(listWrites, head.readAt)) : undefined;
      const list = present
        ? await this.readRecords(db, `organization_id IS NULL AND ${LISTED_FROM_CUT}`, present.cut)
        : await this.readRecords(db, 'organization_id IS NULL');
      const availability = await readAvailability(db);
      const organizations = listOnly ? undefined : await this.readRecords(db, 'organization_id IS NOT NULL');
      const read = organizations ? joined(list, organizations) : list;
      return { ...head, ...read, listWrites, availability, listOnly, ...(present && { present }) };
    });
  }

  /** Every organization's price (what a first read of list prices alone left), in a snapshot of its own. */
  loadOrganizationPrices(): Promise<RecordsRead> {
    return this.dataSource.transaction('REPEATABLE READ', (db) => this.readRecords(db, 'organization_id IS NOT NULL'));
  }

  /**
   * What a first read of the list's present left (loadPricingData's `present`): the list prices
   * whose listing ended before `cut`, and every organization's price, in a snapshot of its own.
   */
  loadPastAndOrganizationPrices(cut: number): Promise<RecordsRead> {
    return this.dataSource.transaction('REPEATABLE READ', (db) =>
      this.readRecords(db, `organization_id IS NOT NULL OR NOT ${LISTED_FROM_CUT}`, cut),
    );
  }

  /**
   * What was written after the change `sinceChangeId`: every record of the product keys those
   * changes name (all scopes; a withdrawn record is simply absent), the list's change-log entries,
   * availability and the head. Ended history of other keys is not read again. Writes take the price
   * book lock before their change ids, so ids grow in commit order and nothing committed later can
   * appear below `sinceChangeId`.
   */
  loadChangesSince(sinceChangeId: string): Promise<PricingChanges> {
    return this.dataSource.transaction('REPEATABLE READ', async (db) => {
      const head = await readHead(db);
      const [summary] = await rows<{ writes: number; records: number; since_changed_at: number | null }>(
        db,
        `SELECT count(DISTINCT changed_at)::int AS writes,
                (SELECT record_count FROM price_book_version)::int AS records,
                (SELECT ${epochMs('changed_at', 'since_changed_at')} FROM price_change WHERE id = $1::bigint)
           FROM price_change WHERE id > $1::bigint`,
        [sinceChangeId],
      );
      const keys = await rows<{ product_key: string }>(
        db,
        `SELECT DISTINCT product_key FROM price_change WHERE id > $1::bigint`,
        [sinceChangeId],
      );
      const productKeys = keys.map((k) => k.product_key);
      const read =
        keys.length === 0
          ? { records: [], ends: EndTable.EMPTY }
          : await this.readRecords(db, `product_key = ANY($1::text[])`, productKeys);
      const listLog: ListWrite[] = [];
      await forEachFetched<ListLogRow>(
        db,
        `SELECT ${LIST_LOG_COLUMNS} FROM price_change c
          WHERE c.id > $1::bigint AND c.organization_id IS NULL AND c.change <> 'availability' ORDER BY c.id`,
        [sinceChangeId],
        (page) => {
          for (const row of page) listLog.push(listWriteOf(row));
        },
        ROWS_A_FETCH,
      );
      return {
        ...head,
        sinceChangeId,
        productKeys,
        ...read,
        listLog,
        availability: await readAvailability(db),
        sinceChangedAt: summary.since_changed_at,
        writeCount: summary.writes,
        recordCount: summary.records,
      };
    });
  }

  /** Where the price book stands, with the database's clock and publication margin: cheap to poll. */
  readHead(): Promise<ReadHead> {
    return readHead(this.dataSource.manager);
  }

  private readRecords(db: EntityManager, where: string, parameter?: unknown): Promise<RecordsRead> {
    return readRecordsWithEnds(db, where, parameter === undefined ? [] : [parameter], (text) => this.pool.intern(text));
  }
}

/**
 * Rows a fetch of the app's reads: pg parses a fetch's rows in one turn of the event loop as they
 * arrive, and at an instance's start 5,000 rows (PAGE) held it 46 ms (docs/benchmarks.md, "The
 * list's past").
 */
const ROWS_A_FETCH = 1_000;

/** Rows read between two looks at the clock (core/slices.ts: inSlices). */
const ROWS_A_STEP = 64;

/**
 * The records `where` selects (its parameters are `parameters`), each page mapped as it is read,
 * with the ends of those whose end changed: from the record's own columns when it changed once
 * (nearly always), else replayed from the change log. What the book as recorded at an instant is
 * read from (core/as-recorded.ts): the prices held in memory, and `focus --as-recorded-at`.
 */
export async function readRecordsWithEnds(
  db: EntityManager,
  where: string,
  parameters: readonly unknown[],
  intern: <T extends string | null>(text: T) => T = (text) => text,
): Promise<RecordsRead> {
  const records: PriceRecord[] = [];
  const ends = EndTable.builder();
  const replayed: PriceRecord[] = [];
  const reader = new PackedRecordReader(intern);
  function* readPage(page: readonly PackedRecordRow[]): Steps<void> {
    for (let i = 0; i < page.length; i++) {
      const { record, endSetAt, endBefore, endChanges } = reader.read(page[i].packed);
      records.push(record);
      if (endChanges === 1 && endSetAt !== null) {
        const from = record.recordedAt ?? record.validFrom;
        ends.changedOnce(record.id, from, endBefore, endSetAt, record.validUntil);
      } else if (endChanges !== 0) replayed.push(record);
      if ((i & (ROWS_A_STEP - 1)) === ROWS_A_STEP - 1) yield;
    }
  }
  await forEachPage<PackedRecordRow>(
    db,
    {
      columns: PACKED_HELD_RECORD,
      table: 'price_record',
      where,
      parameters: [...parameters],
      ordered: false,
      rowsAFetch: ROWS_A_FETCH,
    },
    // In slices: a page of 5,000 rows (the fetches of then) held the event loop 39 ms at an
    // instance's start, its code not yet optimized (7–20 ms after; docs/benchmarks.md, "The list's past").
    (page) => inSlices(readPage(page)),
  );
  if (replayed.length > 0) await readReplayedEnds(db, replayed, ends);
  return { records, ends: ends.build() };
}

/**
 * Whether a price's listing may reach `$1` (epoch ms) or later: it has no end, or its end, or the
 * last change of its end, is not before it. A listing ends at the later of those two at most
 * (core/list-history.ts, piecesOf: each end is shown from when it was set), so a price that fails
 * this was listed only before `$1`. Its negation is exactly the rest (`greatest` skips a NULL).
 */
const LISTED_FROM_CUT = `(valid_until IS NULL OR greatest(valid_until, end_set_at) >= to_timestamp($1::float8 / 1000))`;

/**
 * `present` when the past it leaves holds most of the list prices (years of monthly changes), else
 * `undefined`: the rest is read next and the list built again from every price, which a short past
 * does not repay (at 100,000 list prices and a hundred versions of one, the second build made the
 * first load's longest waits).
 */
async function pastWorthLeaving(db: EntityManager, present: PricingData['present']): Promise<PricingData['present']> {
  if (!present) return undefined;
  const [counted] = await rows<{ past: number; listed: number }>(
    db,
    `SELECT count(*) FILTER (WHERE NOT ${LISTED_FROM_CUT})::int AS past, count(*)::int AS listed
       FROM price_record WHERE organization_id IS NULL`,
    [present.cut],
  );
  return counted.past * 2 > counted.listed ? present : undefined;
}

/** Two reads of one snapshot as one. */
function joined(a: RecordsRead, b: RecordsRead): RecordsRead {
  return { records: [...a.records, ...b.records], ends: EndTable.of(a.ends).with(EndTable.of(b.ends)) };
}

/**
 * The version, the latest entry of the change log (by its primary key: one index step), the
 * database's clock and its publication margin. The clock is the statement's start: a transaction's
 * first statement takes its snapshot after it, so that whatever committed before that instant is
 * in what the transaction reads.
 */
export const HEAD_QUERY = `SELECT v.version::text AS version, c.id::text AS last_change_id, c.last_changed_at,
            ${epochMs('statement_timestamp()', 'read_at')},
            (extract(epoch FROM k.publication_margin) * 1000)::float8 AS margin_ms
       FROM price_book_version v CROSS JOIN price_book_clock k
       LEFT JOIN LATERAL (SELECT id, ${epochMs('changed_at', 'last_changed_at')}
                            FROM price_change ORDER BY id DESC LIMIT 1) c ON true`;

/** A row of HEAD_QUERY. */
export interface HeadRow {
  readonly version: string;
  readonly last_change_id: string | null;
  readonly last_changed_at: number | null;
  readonly read_at: number;
  readonly margin_ms: number;
}

export function toReadHead(row: HeadRow): ReadHead {
  return {
    version: row.version,
    lastChangeId: row.last_change_id ?? '0',
    lastChangedAt: row.last_changed_at,
    readAt: row.read_at,
    marginMs: row.margin_ms,
  };
}

async function readHead(db: EntityManager): Promise<ReadHead> {
  const [head] = await rows<HeadRow>(db, HEAD_QUERY);
  return toReadHead(head);
}

/** Whether two heads are the same place of the price book. */
export function sameHead(a: PriceBookHead, b: PriceBookHead): boolean {
  return a.version === b.version && a.lastChangeId === b.lastChangeId && a.lastChangedAt === b.lastChangedAt;
}

/**
 * The publication instants of the writes of list prices, each once, ascending: a walk of the
 * index of the list's change instants (price_change_list_changed_at) from one instant to the next,
 * a step per write rather than a row per change, each kept when it wrote a list price.
 */
async function readListWrites(db: EntityManager): Promise<number[]> {
  const found = await rows<{ at: number }>(
    db,
    `WITH RECURSIVE write(at) AS (
       (SELECT changed_at FROM price_change WHERE organization_id IS NULL ORDER BY changed_at LIMIT 1)
       UNION ALL
       SELECT (SELECT changed_at FROM price_change
                WHERE organization_id IS NULL AND changed_at > write.at ORDER BY changed_at LIMIT 1)
         FROM write WHERE write.at IS NOT NULL
     )
     SELECT ${epochMs('write.at', 'at')} FROM write
      WHERE write.at IS NOT NULL
        AND EXISTS (SELECT 1 FROM price_change c
                     WHERE c.organization_id IS NULL AND c.changed_at = write.at AND c.change <> 'availability')`,
  );
  return found.map((row) => row.at);
}

/**
 * The ends of `records` (whose end changed more than once) from the change log of their keys and
 * scopes: the end each entry wrote them with, oldest first, from when each was recorded.
 */
async function readReplayedEnds(
  db: EntityManager,
  records: readonly PriceRecord[],
  ends: EndTableBuilder,
): Promise<void> {
  const recordedAt = new Map<number, number>();
  const scopes = new Map<string, [string, string]>();
  for (const record of records) {
    recordedAt.set(record.id, record.recordedAt ?? record.validFrom);
    const organization = record.organizationId ?? '';
    scopes.set(`${record.productKey}\u0000${organization}`, [record.productKey, organization]);
  }
  const pairs = [...scopes.values()];
  await forEachFetched<ListLogRow>(
    db,
    `SELECT ${LIST_LOG_COLUMNS} FROM price_change c
      WHERE c.change <> 'availability'
        AND (c.product_key, coalesce(c.organization_id, '')) IN (SELECT * FROM unnest($1::text[], $2::text[]))
      ORDER BY c.id`,
    [pairs.map(([key]) => key), pairs.map(([, organization]) => organization)],
    (page) => {
      for (const row of page) {
        const write = listWriteOf(row);
        for (const end of [...(write.set ? [write.set] : []), ...(write.ends ?? [])]) {
          const from = recordedAt.get(end.id);
          if (from === undefined) continue;
          const known = ends.get(end.id);
          if (known) known.push({ from: write.at, validUntil: end.validUntil });
          // Written before the log held what writes did: known from when it was recorded, with no end.
          else
            ends.set(
              end.id,
              write.set?.id === end.id
                ? [{ from, validUntil: end.validUntil }]
                : [
                    { from, validUntil: null },
                    { from: write.at, validUntil: end.validUntil },
                  ],
            );
        }
      }
    },
    ROWS_A_FETCH,
  );
}

/** An entry of the change log of a list price, as the list's history needs it. */
interface ListLogRow {
  readonly change_id: number;
  readonly at: number;
  readonly product_key: string;
  readonly set_id: string | null;
  readonly set_until: string | null;
  /** `[[id, valid_until], ...]` of the records it ended, reopened or re-ended. */
  readonly ends: [string, string | null][] | null;
  readonly deleted: string | null;
}

/** Only what the list's history needs of each entry, taken out of its effect by the database. */
const LIST_LOG_COLUMNS = `c.id::float8 AS change_id, ${epochMs('c.changed_at', 'at')}, c.product_key,
  CASE WHEN c.change = 'set' THEN c.effect->'record'->>'id' END AS set_id,
  CASE WHEN c.change = 'set' THEN c.effect->'record'->>'valid_until' END AS set_until,
  (SELECT jsonb_agg(jsonb_build_array(e->>'id', e->>'valid_until'))
     FROM jsonb_array_elements(CASE WHEN jsonb_typeof(c.effect->'ends') = 'array' THEN c.effect->'ends' END) e) AS ends,
  c.effect->>'deleted' AS deleted`;

function listWriteOf(row: ListLogRow): ListWrite {
  const id = (text: string | null): number | undefined =>
    text !== null && /^\d{1,15}$/.test(text) ? Number(text) : undefined;
  const setId = id(row.set_id);
  const deleted = id(row.deleted);
  const ends = (row.ends ?? []).flatMap(([endId, until]) => {
    const known = id(endId);
    return known === undefined ? [] : [{ id: known, validUntil: untilMs(until) }];
  });
  return {
    changeId: row.change_id,
    at: row.at,
    productKey: row.product_key,
    ...(setId !== undefined && { set: { id: setId, validUntil: untilMs(row.set_until) } }),
    ...(ends.length > 0 && { ends }),
    ...(deleted !== undefined && { deleted }),
  };
}

/** An end as the log holds it (epoch microseconds as text) in epoch ms; anything else (`infinity`, a hand-written row) counts as none. */
function untilMs(text: string | null): number | null {
  return text !== null && /^-?\d{1,20}$/.test(text) ? Number(BigInt(text) / 1000n) : null;
}
