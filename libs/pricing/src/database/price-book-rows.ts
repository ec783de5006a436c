import type { EntityManager } from 'typeorm';
import type { PriceRecord } from '../core/price-record';
import { isLoggedEffect, type LoggedRecord } from '../price-book/change-log-chain';
import type { HistoryRecord, PriceChange, PriceChangeKind } from '../price-book/price-history';

// The price book's tables as the library reads them: one row type per table, the columns read,
// and the one mapping from a row of price_record to a PriceRecord. Instants are read as epoch
// milliseconds (parsing 300,000 timestamps as text costs more than the query) and ids as numbers
// (below 2^53).

/**
 * Rows per page of a read (the CLI's, a migration's): few round trips. The app reads fewer a fetch
 * (price-snapshot-reads.ts: ROWS_A_FETCH): pg parses a fetch's rows in one turn of the event loop
 * as they arrive.
 */
export const PAGE = 5_000;

/** Rows per statement of a write: each stays well within the database timeout. */
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

/** A timestamp column as epoch milliseconds. */
export const epochMs = (column: string, alias = column): string =>
  `(extract(epoch FROM ${column}) * 1000)::float8 AS ${alias}`;

/**
 * A timestamp column as the change log holds an instant (change-log-chain.ts): epoch microseconds
 * in decimal, exactly as stored; PostgreSQL's own text (`infinity`, `-infinity`) when not finite.
 * Counted from PostgreSQL's own epoch (2000) as an interval, then moved to 1970 in numeric: its
 * latest instants are beyond a bigint of microseconds since 1970, and extract(epoch) of those
 * rounds them.
 */
export const microsText = (column: string): string =>
  `CASE WHEN isfinite(${column})
        THEN trunc((extract(epoch FROM ${column} - timestamptz '2000-01-01 00:00:00+00') + 946684800) * 1000000)::text
        ELSE ${column}::text END`;

/**
 * The columns of price_record `table` as the change log holds a record (LoggedRecord): every
 * column as text, instants as microsText; each named `prefix` and the column's name.
 */
export function loggedRecordColumns(table = 'price_record', prefix = ''): string {
  const text = (column: string, value = `${table}.${column}`) => `${value} AS ${prefix}${column}`;
  return [
    text('id', `${table}.id::text`),
    text('product_key'),
    text('organization_id'),
    text('unit_type'),
    text('unit_count', `${table}.unit_count::text`),
    text('amount', `${table}.amount::text`),
    ...['valid_from', 'valid_until', 'recorded_at'].map((column) => text(column, microsText(`${table}.${column}`))),
    text('superseded_by', `${table}.superseded_by::text`),
  ].join(', ');
}

/** The LoggedRecord of a row read with loggedRecordColumns(…, `prefix`). */
export function loggedRecordOf(row: Readonly<Record<string, unknown>>, prefix = ''): LoggedRecord {
  const field = (column: keyof LoggedRecord) => row[`${prefix}${column}`] as string;
  return {
    id: field('id'),
    product_key: field('product_key'),
    organization_id: field('organization_id'),
    unit_type: field('unit_type'),
    unit_count: field('unit_count'),
    amount: field('amount'),
    valid_from: field('valid_from'),
    valid_until: field('valid_until'),
    recorded_at: field('recorded_at'),
    superseded_by: field('superseded_by'),
  };
}

/** A row of price_record, as RECORD_COLUMNS reads it. */
export interface PriceRecordRow {
  readonly id: number;
  readonly product_key: string;
  readonly organization_id: string | null;
  readonly unit_type: PriceRecord['unitType'];
  readonly unit_count: number;
  readonly amount: string;
  readonly valid_from: number;
  readonly valid_until: number | null;
  /** `null` only in a row written before the column was (never, once migrated). */
  readonly recorded_at: number | null;
  readonly superseded_by: number | null;
}

const recordColumns = (recordedAt: string): string => `price_record.id::float8 AS id, product_key, organization_id,
  unit_type, unit_count, amount::text AS amount, ${epochMs('valid_from')}, ${epochMs('valid_until')},
  ${epochMs(recordedAt, 'recorded_at')}, superseded_by::float8 AS superseded_by`;

export const RECORD_COLUMNS = recordColumns('recorded_at');

/**
 * RECORD_COLUMNS, with when the record's end last changed, from what, and how many times (the book
 * as recorded at any instant, core/as-recorded.ts, and the list's past, core/list-history.ts),
 * packed into one text column, `packed`, in the order PackedRecordReader reads them, comma
 * separated, an empty field for NULL: the same values as columns give, for a fraction of the cost
 * (reading 13 columns of 600,000 rows took pg's parser seconds:
 * docs/benchmarks.md, "The list's past"). Instants as extract(epoch) writes them, exact decimal
 * seconds (PackedRecordReader makes the same epoch ms of them as epochMs's float8: the decimal
 * times 1000, rounded once), without epochMs's two conversions through float8 (half the
 * database's work). No field can hold a comma: keys, organization ids, unit types and amounts
 * are checked by the table.
 */
export const PACKED_HELD_RECORD = `concat_ws(',', price_record.id, unit_count, end_changes,
  ${['valid_from', 'valid_until', 'recorded_at', 'end_set_at', 'end_before']
    .map((column) => `coalesce(extract(epoch FROM ${column})::text, '')`)
    .join(', ')},
  coalesce(superseded_by::text, ''), product_key, coalesce(organization_id, ''), unit_type, amount::text) AS packed`;

/** A row read with PACKED_HELD_RECORD. */
export interface PackedRecordRow {
  readonly packed: string;
}

/** A record read from PACKED_HELD_RECORD, with when its end last changed, from what, and how many times. */
export interface HeldRecord {
  readonly record: PriceRecord;
  readonly endSetAt: number | null;
  readonly endBefore: number | null;
  readonly endChanges: number;
}

/**
 * Reads the records PACKED_HELD_RECORD packs, each field where it stands (no array of 13 strings
 * a row: that and the numbers' strings were most of a five-year start-up's read); `intern` shares
 * the strings that repeat. Throws on text of another form (never from the table).
 */
export class PackedRecordReader {
  private text = '';
  private at = 0;
  /** The decimal scan() read last: its sign, its digits as an integer, how many, and after the point. */
  private negative = false;
  private n = 0;
  private digits = 0;
  private places = -1;
  /**
   * Each end read, once: a record's end is a boxed double (16 bytes), and most records share their
   * end with others (a write ends the prices it replaces at one instant); this one held for them
   * all (9 MB at 600,000 records). Only the end: a field that is never null holds its own box.
   */
  private readonly ends = new Map<number, number>();

  constructor(private readonly intern: <T extends string | null>(text: T) => T = asIs) {}

  read(packed: string): HeldRecord {
    this.text = packed;
    this.at = 0;
    const id = this.number();
    const unitCount = this.number();
    const endChanges = this.number();
    const validFrom = this.instant();
    const validUntil = this.empty() ? null : this.sharedEnd(this.instant());
    const recordedAt = this.empty() ? null : this.instant();
    const endSetAt = this.empty() ? null : this.instant();
    const endBefore = this.empty() ? null : this.instant();
    const supersededBy = this.empty() ? null : this.number();
    const productKey = this.intern(this.field());
    const organization = this.field();
    const unitType = this.intern(this.field()) as PriceRecord['unitType'];
    const amount = this.intern(this.field(true));
    // One literal with every field, as toPriceRecord's.
    const record: PriceRecord = {
      id,
      productKey,
      organizationId: organization === '' ? null : this.intern(organization),
      unitType,
      unitCount,
      amount,
      validFrom,
      validUntil,
      supersededBy,
      recordedAt: recordedAt ?? undefined,
    };
    return { record, endSetAt, endBefore, endChanges };
  }

  private sharedEnd(end: number): number {
    if (end === 0) return end; // the Map takes -0 for 0
    const held = this.ends.get(end);
    if (held !== undefined) return held;
    this.ends.set(end, end);
    return end;
  }

  /** The next field's text; the last one runs to the end. */
  private field(last = false): string {
    const comma = this.text.indexOf(',', this.at);
    if (comma < 0 !== last) throw this.malformed();
    const end = last ? this.text.length : comma;
    const text = this.text.slice(this.at, end);
    this.at = end + 1;
    return text;
  }

  /** Whether the next field is empty (NULL), passed if so. */
  private empty(): boolean {
    if (this.text.charCodeAt(this.at) !== 44) return false; // not ','
    this.at++;
    return true;
  }

  /**
   * The next field, an instant as extract(epoch) writes it (decimal seconds), in epoch ms: the
   * decimal times 1000, rounded once (as a float8 of it, and Number of it, round): its digits an
   * exact integer, times or divided by an exact power of ten; anything else (more digits than a
   * double holds exactly, `Infinity`) through Number, its point moved in the text.
   */
  private instant(): number {
    const end = this.scan();
    const { digits, places } = this;
    if (
      this.text.charCodeAt(end) === 44 &&
      digits > 0 &&
      places !== 0 &&
      places <= 25 &&
      this.n <= Number.MAX_SAFE_INTEGER
    ) {
      this.at = end + 1;
      const value = places <= 3 ? this.n * 10 ** (3 - Math.max(places, 0)) : this.n / 10 ** (places - 3);
      return this.negative ? -value : value;
    }
    const field = this.field();
    const m = /^(-?)(\d*)(?:\.(\d+))?$/.exec(field);
    if (field === 'Infinity' || field === '-Infinity') return Number(field);
    if (!m || (m[2] === '' && m[3] === undefined)) throw this.malformed();
    const fraction = m[3] ?? '';
    return Number(`${m[1]}${m[2]}${fraction.slice(0, 3).padEnd(3, '0')}.${fraction.slice(3)}0`);
  }

  /**
   * The next field's number, as Number() reads it: a plain decimal of at most 15 digits at once
   * (its digits an exact integer, divided by an exact power of ten: one rounding, as Number's),
   * anything else (an exponent, more digits) through Number.
   */
  private number(): number {
    const end = this.scan();
    const { digits, places } = this;
    if (this.text.charCodeAt(end) === 44 && digits > 0 && digits <= 15 && places !== 0) {
      this.at = end + 1;
      // An integer of 31 bits as a small integer (`| 0`): `n`, read from a field of doubles, is a
      // boxed double, and a record's field that once held one boxes every value it holds (16 bytes
      // each: ids and unit counts, 19 MB at 600,000 records).
      const value = places > 0 ? this.n / 10 ** places : this.n < 2 ** 31 ? this.n | 0 : this.n;
      return this.negative ? -value : value;
    }
    const field = this.field();
    const value = Number(field);
    if (field === '' || Number.isNaN(value)) throw this.malformed();
    return value;
  }

  /**
   * Scans a plain decimal (a sign, digits, a point) from the next field's start, without passing
   * it: sets `negative`, `n` (its digits as an integer), `digits` and `places` (digits after the
   * point, -1 for none); returns the index just after it.
   */
  private scan(): number {
    const text = this.text;
    let i = this.at;
    this.negative = text.charCodeAt(i) === 45; // '-'
    if (this.negative) i++;
    let n = 0;
    let digits = 0;
    let places = -1;
    for (; ; i++) {
      const c = text.charCodeAt(i);
      if (c >= 48 && c <= 57) {
        n = n * 10 + (c - 48);
        digits++;
        if (places >= 0) places++;
      } else if (c === 46 && places < 0)
        places = 0; // '.'
      else break;
    }
    this.n = n;
    this.digits = digits;
    this.places = places;
    return i;
  }

  private malformed(): Error {
    return new Error(`a packed price record is not of its form: ${JSON.stringify(this.text.slice(0, 200))}`);
  }
}

/**
 * A timestamp column as microsText where JavaScript cannot represent it (beyond a Date's range, or
 * not finite: a row written by hand), else NULL; beside its epochMs.
 */
const beyondDate = (column: string, alias: string): string =>
  `CASE WHEN isfinite(${column}) AND ${column} <= '275760-09-13 00:00:00+00' THEN NULL ELSE ${microsText(column)} END AS ${alias}`;

/** A row of price_change, as CHANGE_COLUMNS reads it. */
export interface PriceChangeRow {
  readonly id: number;
  readonly changed_at: number;
  readonly changed_at_text: string | null;
  readonly product_key: string;
  readonly organization_id: string | null;
  readonly change: PriceChangeKind;
  readonly price_record_id: number | null;
  readonly actor: string | null;
  readonly reason: string | null;
  readonly on_sale: boolean | null;
  /** As stored: whatever the row holds (toPriceChange keeps it when it is of the log's form). */
  readonly effect: unknown;
}

export const CHANGE_COLUMNS = `price_change.id::float8 AS id, ${epochMs('changed_at')},
  ${beyondDate('changed_at', 'changed_at_text')}, product_key, organization_id, change,
  price_record_id::float8 AS price_record_id, actor, reason, on_sale, effect`;

/** A row of product_availability. */
interface AvailabilityRow {
  readonly product_key: string;
  readonly on_sale: boolean;
}

/** The one row of price_book_version. */
export interface VersionRow {
  readonly version: string;
  readonly record_count: number;
}

const asIs = <T extends string | null>(text: T): T => text;

/**
 * The one mapping from a row of price_record to a PriceRecord; `intern` shares the strings that
 * repeat across records (snapshot reads: StringPool).
 */
export function toPriceRecord(
  row: PriceRecordRow,
  intern: <T extends string | null>(text: T) => T = asIs,
): PriceRecord {
  // One literal with every field, recordedAt too (undefined when the row has none): a field added
  // after the literal lands outside the object, about 40 more bytes a record (docs/benchmarks.md,
  // "The list's past").
  return {
    id: row.id,
    productKey: intern(row.product_key),
    organizationId: intern(row.organization_id),
    unitType: intern(row.unit_type),
    unitCount: row.unit_count,
    amount: intern(row.amount),
    validFrom: row.valid_from,
    validUntil: row.valid_until,
    supersededBy: row.superseded_by,
    recordedAt: row.recorded_at ?? undefined,
  };
}

export function toPriceChange(row: PriceChangeRow): PriceChange {
  return {
    changedAt: row.changed_at,
    ...(row.changed_at_text === null ? {} : { changedAtText: row.changed_at_text }),
    change: row.change,
    priceRecordId: row.price_record_id,
    actor: row.actor,
    reason: row.reason,
    effect: isLoggedEffect(row.effect) ? row.effect : null,
    ...(row.change === 'availability' ? { onSale: row.on_sale } : {}),
  };
}

/** A row of price_record as history reads it (HISTORY_RECORD_COLUMNS). */
export interface HistoryRecordRow extends PriceRecordRow {
  readonly valid_from_text: string | null;
  readonly valid_until_text: string | null;
  readonly recorded_at_text: string | null;
}

/** RECORD_COLUMNS, and each instant as stored where JavaScript cannot represent it (beyondDate). */
export const HISTORY_RECORD_COLUMNS = `${RECORD_COLUMNS}, ${beyondDate('valid_from', 'valid_from_text')},
  ${beyondDate('valid_until', 'valid_until_text')}, ${beyondDate('recorded_at', 'recorded_at_text')}`;

/** A record as history shows it: toPriceRecord, with the instants a number cannot show as stored. */
export function toHistoryRecord(row: HistoryRecordRow): HistoryRecord {
  const texts = {
    ...(row.valid_from_text === null ? {} : { validFrom: row.valid_from_text }),
    ...(row.valid_until_text === null ? {} : { validUntil: row.valid_until_text }),
    ...(row.recorded_at_text === null ? {} : { recordedAt: row.recorded_at_text }),
  };
  const record = toPriceRecord(row);
  return Object.keys(texts).length === 0 ? record : { ...record, instantTexts: texts };
}

/** Rows of a query, typed by the caller: the SQL and its row shape live side by side in database/. */
export function rows<T>(db: EntityManager, sql: string, parameters: readonly unknown[] = []): Promise<T[]> {
  return db.query<T[]>(sql, [...parameters]);
}

/** What forEachPage reads: `where` may use parameters from $1 on. */
export interface PagedQuery {
  readonly columns: string;
  readonly table: 'price_record' | 'price_change';
  readonly where?: string;
  readonly parameters?: readonly unknown[];
  /** Rows in id order (the default); `false` when their order does not matter (no sort, no index needed). */
  readonly ordered?: boolean;
  /** Rows a fetch: PAGE unless said. */
  readonly rowsAFetch?: number;
}

/** Cursors made by forEachPage, numbered: several may be open in one transaction. */
let cursors = 0;

/**
 * Reads a table's rows (in id order unless `ordered: false`) through a cursor in the caller's
 * transaction, `rowsAFetch` rows a fetch (PAGE unless said), giving each page to `consume` as it
 * is read, the last one too (it has fewer rows, maybe none), until `consume` returns `false`: the
 * rows of a million records are never all held at once, no fetch runs long, and the query is
 * planned once, whatever the table's statistics say (pages planned one by one sort every remaining
 * row when statistics are stale, as right after a bulk import: a read then takes time quadratic in
 * the table).
 */
export async function forEachPage<Row>(
  db: EntityManager,
  { columns, table, where = 'true', parameters = [], ordered = true, rowsAFetch = PAGE }: PagedQuery,
  consume: (page: readonly Row[]) => unknown,
): Promise<void> {
  // ${table}.id, not id: an output column `id` may be float8 or text, which the primary key does not index.
  const order = ordered ? ` ORDER BY ${table}.id` : '';
  await forEachFetched(db, `SELECT ${columns} FROM ${table} WHERE (${where})${order}`, parameters, consume, rowsAFetch);
}

/** The rows of any query through a cursor, `rowsAFetch` at a time, as forEachPage reads a table's. */
export async function forEachFetched<Row>(
  db: EntityManager,
  query: string,
  parameters: readonly unknown[],
  consume: (page: readonly Row[]) => unknown,
  rowsAFetch = PAGE,
): Promise<void> {
  const cursor = `pricing_rows_${++cursors}`;
  await db.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${query}`, [...parameters]);
  const fetch = (): Promise<Row[]> => rows<Row>(db, `FETCH ${rowsAFetch} FROM ${cursor}`);
  let next: Promise<Row[]> | undefined = fetch();
  try {
    for (;;) {
      const page: Row[] = await next;
      // The next page asked for before this one is consumed: the database reads it meanwhile (the
      // connection runs its queries in turn, so the CLOSE below still comes after it).
      next = page.length < rowsAFetch ? undefined : fetch();
      next?.catch(() => undefined);
      // The fetch reaches the connection through promises (TypeORM's query runner): a turn of the
      // loop sends it before the page is consumed, or the database would wait for the consumer and
      // the consumer for it (40% of a five-year start-up's read was spent so).
      if (next) await new Promise((resolve) => setImmediate(resolve));
      // `false` from consume: no more pages.
      if ((await consume(page)) === false || next === undefined) return;
    }
  } finally {
    await db.query(`CLOSE ${cursor}`).catch(() => undefined);
  }
}

/** The availability of products (a product not listed is on sale). */
export async function readAvailability(db: EntityManager): Promise<Map<string, boolean>> {
  const found = await rows<AvailabilityRow>(db, `SELECT product_key, on_sale FROM product_availability`);
  return new Map(found.map((row) => [row.product_key, row.on_sale]));
}

/** The counter every write moves. */
export async function readVersion(db: EntityManager): Promise<string> {
  const [row] = await rows<Pick<VersionRow, 'version'>>(db, `SELECT version::text FROM price_book_version`);
  return row.version;
}
