import { firstIndexOf } from './bisect';

// The ends records had before (core/as-recorded.ts, ListSources.ends), held for every record whose
// end ever changed: with five years of monthly re-pricing that is nearly every record. A Map of an
// array of two objects per record took about 180 bytes each (docs/benchmarks.md, "The list's past");
// here a record whose end changed once (nearly all: `price_record.end_set_at`/`end_before`) takes
// five numbers in typed arrays, and the few replayed from the change log keep their arrays.

/** From `from` on (a write's publication instant), a price's end was `validUntil` (null: none). */
export interface KnownEnd {
  readonly from: number;
  readonly validUntil: number | null;
}

/** What the ends of a record are looked up in: a ReadonlyMap fits, as the tests' fixtures use. */
export interface KnownEnds {
  get(id: number): readonly KnownEnd[] | undefined;
}

/** Five columns of the records whose end changed once, by ascending id. */
interface Columns {
  readonly ids: Float64Array;
  /** The instant the record was recorded, and the end it had then (NaN: none). */
  readonly from: Float64Array;
  readonly before: Float64Array;
  /** The instant its end changed, and the end from then on (NaN: none). */
  readonly setAt: Float64Array;
  readonly until: Float64Array;
}

const EMPTY: Columns = {
  ids: new Float64Array(0),
  from: new Float64Array(0),
  before: new Float64Array(0),
  setAt: new Float64Array(0),
  until: new Float64Array(0),
};

/** A table of more ends than this is merged into the columns rather than held beside them. */
const MERGED_FROM = 4_096;

const nullable = (value: number): number | null => (Number.isNaN(value) ? null : value);

/**
 * An immutable table of known ends by record id. `with` makes a table with more (a reload's
 * records): the columns are shared, the few ends read since go in a small map beside them, so that
 * a change costs its own records, never the whole book's.
 */
export class EndTable implements KnownEnds {
  /** The latest instant from which an end held here is known. */
  readonly latestFrom: number;

  private constructor(
    private readonly columns: Columns,
    private readonly others: ReadonlyMap<number, readonly KnownEnd[]>,
    latestFrom: number,
  ) {
    this.latestFrom = latestFrom;
  }

  static readonly EMPTY = new EndTable(EMPTY, new Map(), -Infinity);

  /** A table of `ends` as a Map holds them (the tests' fixtures, a reload's few records). */
  static of(ends: EndTable | ReadonlyMap<number, readonly KnownEnd[]>): EndTable {
    if (ends instanceof EndTable) return ends;
    return EndTable.EMPTY.with(ends);
  }

  /** Collects ends in the order the records come, then makes the table. */
  static builder(): EndTableBuilder {
    return new EndTableBuilder();
  }

  /** @internal EndTableBuilder's. */
  static fromColumns(columns: Columns, others: ReadonlyMap<number, readonly KnownEnd[]>): EndTable {
    let latest = -Infinity;
    for (let i = 0; i < columns.setAt.length; i++) latest = Math.max(latest, columns.from[i], columns.setAt[i]);
    for (const ends of others.values()) for (const end of ends) if (end.from > latest) latest = end.from;
    return new EndTable(columns, others, latest);
  }

  get(id: number): readonly KnownEnd[] | undefined {
    const other = this.others.get(id);
    if (other !== undefined) return other;
    const { ids } = this.columns;
    const i = firstIndexOf(ids.length, (j) => ids[j] >= id);
    if (i === ids.length || ids[i] !== id) return undefined;
    const c = this.columns;
    return [
      { from: c.from[i], validUntil: nullable(c.before[i]) },
      { from: c.setAt[i], validUntil: nullable(c.until[i]) },
    ];
  }

  /** How many records' ends the table holds. */
  get size(): number {
    let size = this.columns.ids.length;
    for (const id of this.others.keys()) if (!this.inColumns(id)) size++;
    return size;
  }

  private inColumns(id: number): boolean {
    const { ids } = this.columns;
    const i = firstIndexOf(ids.length, (j) => ids[j] >= id);
    return i < ids.length && ids[i] === id;
  }

  /** Every record's ends: ids in the columns ascending, then those replayed. */
  *entries(): Generator<[number, readonly KnownEnd[]]> {
    for (const id of this.columns.ids) if (!this.others.has(id)) yield [id, this.get(id)!];
    yield* this.others;
  }

  /**
   * This table with `more` (each replacing what this one holds for its id): a large table's
   * columns merged (organizations' prices read after the list's), a few ends beside the columns.
   */
  with(more: EndTable | Iterable<readonly [number, readonly KnownEnd[]]>): EndTable {
    if (more instanceof EndTable && more.size <= MERGED_FROM) return this.with(more.entries());
    if (more instanceof EndTable) {
      const columns = more.columns.ids.length === 0 ? this.columns : merged(this.columns, more.columns);
      const others = new Map(this.others);
      for (const id of more.columns.ids) others.delete(id);
      for (const [id, ends] of more.others) others.set(id, ends);
      return EndTable.fromColumns(columns, others);
    }
    const others = new Map(this.others);
    let latest = this.latestFrom;
    for (const [id, ends] of more) {
      others.set(id, ends);
      for (const end of ends) if (end.from > latest) latest = end.from;
    }
    return new EndTable(this.columns, others, latest);
  }
}

/** Collects the ends of records as they are read (any order), and makes an EndTable of them. */
export class EndTableBuilder {
  private length = 0;
  private columns: Columns = EMPTY;
  private readonly others = new Map<number, KnownEnd[]>();

  /** Record `id`, recorded at `from` with the end `before`, had its end set to `until` at `setAt`. */
  changedOnce(id: number, from: number, before: number | null, setAt: number, until: number | null): void {
    if (this.length === this.columns.ids.length) this.columns = resized(this.columns, Math.max(1024, 2 * this.length));
    const c = this.columns;
    const i = this.length++;
    c.ids[i] = id;
    c.from[i] = from;
    c.before[i] = before ?? NaN;
    c.setAt[i] = setAt;
    c.until[i] = until ?? NaN;
  }

  /** Record `id`'s ends, oldest first (replayed from the change log). */
  set(id: number, ends: KnownEnd[]): void {
    this.others.set(id, ends);
  }

  /** What `set` was given for `id`, to add to as the log is replayed. */
  get(id: number): KnownEnd[] | undefined {
    return this.others.get(id);
  }

  build(): EndTable {
    const n = this.length;
    const c = this.columns;
    const order = idOrder(c.ids, n);
    const column = (values: Float64Array): Float64Array => {
      if (order === undefined) return values.slice(0, n);
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) out[i] = values[order[i]];
      return out;
    };
    const columns = {
      ids: column(c.ids),
      from: column(c.from),
      before: column(c.before),
      setAt: column(c.setAt),
      until: column(c.until),
    };
    this.columns = EMPTY;
    // Replayed ends win over the record's own columns: an id is in one or the other.
    return EndTable.fromColumns(columns, this.others);
  }
}

/**
 * The indices of the first `n` of `ids` in ascending order of id; `undefined` when they are in
 * order already. Rows come in the table's physical order, which an update of a row changes: each
 * id and index packed in one number and sorted natively where they fit in 53 bits (a comparator
 * took a quarter of a second at 600,000 rows).
 */
function idOrder(ids: Float64Array, n: number): Uint32Array | undefined {
  let sorted = true;
  let integral = true;
  let max = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0 && ids[i - 1] >= ids[i]) sorted = false;
    if (!(Number.isInteger(ids[i]) && ids[i] >= 0)) integral = false;
    else if (ids[i] > max) max = ids[i];
  }
  if (sorted) return undefined;
  const bits = Math.max(1, Math.ceil(Math.log2(n + 1)));
  if (integral && max * 2 ** bits < Number.MAX_SAFE_INTEGER) {
    const packed = new Float64Array(n);
    for (let i = 0; i < n; i++) packed[i] = ids[i] * 2 ** bits + i;
    packed.sort();
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = packed[i] % 2 ** bits;
    return order;
  }
  return Uint32Array.from({ length: n }, (_, i) => i).sort((a, b) => ids[a] - ids[b]);
}

/** `columns` copied into arrays of `length` rows (the rows beyond cut, or zeros after). */
function resized(columns: Columns, length: number): Columns {
  const copy = (values: Float64Array): Float64Array => {
    const out = new Float64Array(length);
    out.set(values.subarray(0, Math.min(values.length, length)));
    return out;
  };
  return {
    ids: copy(columns.ids),
    from: copy(columns.from),
    before: copy(columns.before),
    setAt: copy(columns.setAt),
    until: copy(columns.until),
  };
}

/** Two column sets as one, by ascending id; `b`'s row wins for an id in both. */
function merged(a: Columns, b: Columns): Columns {
  const n = a.ids.length + b.ids.length;
  const out = {
    ids: new Float64Array(n),
    from: new Float64Array(n),
    before: new Float64Array(n),
    setAt: new Float64Array(n),
    until: new Float64Array(n),
  };
  let i = 0;
  let j = 0;
  let k = 0;
  const take = (c: Columns, at: number): void => {
    out.ids[k] = c.ids[at];
    out.from[k] = c.from[at];
    out.before[k] = c.before[at];
    out.setAt[k] = c.setAt[at];
    out.until[k] = c.until[at];
    k++;
  };
  while (i < a.ids.length || j < b.ids.length) {
    if (j === b.ids.length || (i < a.ids.length && a.ids[i] < b.ids[j])) take(a, i++);
    else {
      if (i < a.ids.length && a.ids[i] === b.ids[j]) i++;
      take(b, j++);
    }
  }
  return {
    ids: out.ids.subarray(0, k),
    from: out.from.subarray(0, k),
    before: out.before.subarray(0, k),
    setAt: out.setAt.subarray(0, k),
    until: out.until.subarray(0, k),
  };
}
