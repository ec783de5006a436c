import { firstIndexOf, firstIndexWhere } from './bisect';
import type { KnownEnd, KnownEnds } from './end-table';
import { ChainHasher, LeafWriter } from './feed-chain';
import { parseProductKey } from '../catalogue/catalogue';
import { compareCodePoints, naturalKey } from '../catalogue/natural-order';
import { entryText, type ListAt } from './price-list';
import type { PriceRecord } from './price-record';
import { sortInSteps, type Steps } from './slices';

// The public list over time (docs/decisions.md, "One clock" and "Prices as they were"): one value
// that the present and the past are both read from. Each product's **timeline** holds its entry
// (section 2.3 of the API document: a list price with the end the list showed) from each instant
// at which it changed; the **feed** is every such change in the order `/v1/pricing/changes` serves
// them; the **versions** are the instants at which the list's document changed (an entry, or a
// write of list prices, which moves `last_changed`). A write changes the list only from its
// publication instant on, which no instance has served yet: so the history is only ever extended,
// never rewritten before that instant, and the list at any instant up to now is final.

export type { KnownEnd } from './end-table';

/** What the history is built from at start-up (PriceSnapshotReads). */
export interface ListSources {
  /** Every list price, ended ones too, each with `recordedAt`: its write's publication instant. */
  readonly records: Iterable<PriceRecord>;
  /**
   * The ends of each price whose end ever changed, oldest first, the first from `recordedAt` (the
   * end it was written with); a price not here had its end as stored from `recordedAt` on.
   */
  readonly ends: KnownEnds;
  /** The publication instants of the writes of list prices, in any order. */
  readonly writes: readonly number[];
  /** The change-log entry read last: `extend` starts after it. */
  readonly lastChangeId: number;
}

/** A change-log entry of a list price, as `extend` applies it (in the log's order). */
export interface ListWrite {
  readonly changeId: number;
  /** The write's publication instant. */
  readonly at: number;
  readonly productKey: string;
  /** The price this entry recorded, with the end it was written with. */
  readonly set?: { readonly id: number; readonly validUntil: number | null };
  /** The prices whose end this entry set, moved or withdrew (null: none). */
  readonly ends?: readonly { readonly id: number; readonly validUntil: number | null }[];
  /** The scheduled price this entry withdrew. */
  readonly deleted?: number;
}

/**
 * A change of the public list: the entry of one product just before `at` and from `at` on, its
 * place in the feed (from 0) and its hash in the feed's chain (core/feed-chain.ts).
 */
export interface ListChange {
  readonly position: number;
  readonly hash: Buffer;
  readonly at: number;
  readonly productKey: string;
  readonly family: number;
  readonly sortKey: string;
  readonly before: PriceRecord | null;
  readonly after: PriceRecord | null;
}

/** A place in the change feed: just after the change of `productKey` at `at` ('' for before every key). */
export interface FeedPosition {
  readonly at: number;
  readonly productKey: string;
}

/** The chain's head is kept after every this many changes of the feed (a hash between is made again when asked for). */
const CHAIN_STRIDE = 16;

/** A product's entry at each instant it changed; `records[i]` null while it is not listed. */
class Timeline {
  at: number[] = [];
  records: (PriceRecord | null)[] = [];
  /** The end shown with `records[i]`; NaN for none. */
  until: number[] = [];
  /**
   * The prices a later write may still change (not ended by the last write), with their ends then:
   * nearly always one, so an array at its length, not a Map (a history of 100,000 list prices held
   * 59 MB with a Map each, 46 MB so).
   */
  live: readonly Held[] = NONE_LIVE;
  /** The serialized entry the present was last rendered with (one slot: the past is rendered when asked). */
  rendered: { index: number; text: string } | undefined;

  constructor(
    /** Its place in ListHistory's `lines` (the feed names a timeline by it). */
    readonly number: number,
    readonly productKey: string,
    readonly family: number,
    readonly sortKey: string,
  ) {}

  /** The index of the change in force at `at`; -1 before the first. */
  indexAt(at: number): number {
    return firstIndexWhere(this.at, (instant) => instant > at) - 1;
  }

  /** The entry from change `i` on, as the list shows it (its end as known then); null when not listed. */
  entry(i: number): PriceRecord | null {
    const record = i < 0 ? null : this.records[i];
    if (record === null) return null;
    const until = this.shownUntil(i);
    return until === record.validUntil ? record : { ...record, validUntil: until };
  }

  /** The end shown with change `i`'s record (null: none). */
  shownUntil(i: number): number | null {
    return Number.isNaN(this.until[i]) ? null : this.until[i];
  }

  /** The serialized entry of change `i`; kept when `keep` (the present), replacing an older one. */
  text(i: number, keep: boolean): string {
    if (this.rendered?.index === i) return this.rendered.text;
    const text = entryText(this.entry(i)!);
    if (keep && (this.rendered === undefined || this.rendered.index < i)) this.rendered = { index: i, text };
    return text;
  }

  /**
   * Its arrays copied at their length: grown by pushes, they hold room for a fifth more, and a
   * history built at start-up is mostly never extended (6 MB at five years of history).
   */
  fit(): void {
    this.at = this.at.slice();
    this.records = this.records.slice();
    this.until = this.until.slice();
  }

  /** Forgets the changes at or after `from`: what a write replaces. */
  truncate(from: number): void {
    const kept = firstIndexWhere(this.at, (instant) => instant >= from);
    this.at.length = kept;
    this.records.length = kept;
    this.until.length = kept;
    if (this.rendered !== undefined && this.rendered.index >= kept) this.rendered = undefined;
  }

  /** Appends a change at `at` to (`record`, `until`), unless the list would show the same entry. */
  push(at: number, record: PriceRecord | null, until: number | null): void {
    const last = this.at.length - 1;
    const shown = until ?? NaN;
    if (last >= 0 && this.at[last] === at) {
      // Two changes at one instant: the later one is what the list shows from it.
      this.at.length = this.records.length = this.until.length = last;
      return this.push(at, record, until);
    }
    if (sameEntry(last < 0 ? null : this.records[last], last < 0 ? NaN : this.until[last], record, shown)) return;
    this.at.push(at);
    this.records.push(record);
    this.until.push(shown);
  }
}

/** A price as a write left it: the record and its end then. */
interface Held {
  readonly record: PriceRecord;
  readonly until: number | null;
}

const NONE_LIVE: readonly Held[] = [];

/** Where a price is listed, as its end then makes it: [start, end), shown with `until`. */
interface Piece {
  readonly start: number;
  readonly end: number;
  readonly record: PriceRecord;
  readonly until: number | null;
}

/**
 * The public list over time: every product's timeline, the feed, the versions. Extended by each
 * write (`extend`), in place: a write replaces only what its timelines hold at or after its
 * publication instant, so what any reader took before that instant stays as it was.
 */
export class ListHistory {
  private readonly timelines = new Map<string, Timeline>();
  /** The timelines in the list's order (families as in section 2.4, then natural order); replaced, never changed. */
  private order: readonly Timeline[] = [];
  /** Every timeline, by its number. */
  private readonly lines: Timeline[] = [];
  private readonly feed = new Feed(this.lines);
  /**
   * The chain's head after every CHAIN_STRIDE changes of the feed's first `chained`, 32 bytes each
   * from the head of none (core/feed-chain.ts): a hash between two is made again when asked for,
   * from the one before it (a hash per change held 38 MB at five years of history).
   */
  private chain: Buffer = Buffer.alloc(32);
  private chained = 0;
  /** While `extend` changes the timelines and the feed: hashFeed stops. */
  private extending = false;
  private readonly versions: number[] = [];
  private readonly writes: number[] = [];
  /** The instant from which each extension changed the list, by revision. */
  private readonly extensions: number[] = [];
  private applied: number;

  private constructor(lastChangeId: number) {
    this.applied = lastChangeId;
  }

  /**
   * The history of `sources`, in steps (core/slices.ts): a long history is built without holding
   * the event loop. Its feed is hashed too, unless `hashed` is false: then `hashFeed` does it, later.
   */
  static *build(sources: ListSources, { hashed = true } = {}): Steps<ListHistory> {
    const history = new ListHistory(sources.lastChangeId);
    const byKey = new Map<string, PriceRecord[]>();
    let n = 0;
    for (const record of sources.records) {
      if ((++n & 1023) === 0) yield;
      if (record.organizationId !== null) continue;
      const records = byKey.get(record.productKey);
      if (records) records.push(record);
      else byKey.set(record.productKey, [record]);
    }
    let lastWrite = -Infinity;
    for (const at of sources.writes) if (at > lastWrite) lastWrite = at;
    for (const [productKey, records] of byKey) {
      const timeline = history.timeline(productKey, false);
      if (!timeline) continue;
      const pieces: Piece[] = [];
      const live: Held[] = [];
      for (const record of records) {
        const recordedAt = record.recordedAt ?? record.validFrom;
        const ends = sources.ends.get(record.id) ?? [{ from: recordedAt, validUntil: record.validUntil }];
        for (const [i, end] of ends.entries()) piecesOf(pieces, record, end, ends[i + 1]?.from ?? Infinity);
        if (record.validUntil === null || record.validUntil > lastWrite)
          live.push({ record, until: record.validUntil });
        if ((++n & 127) === 0) yield;
      }
      if (live.length > 0) timeline.live = live.slice();
      emit(timeline, pieces);
      timeline.fit();
    }
    history.order = yield* sortedTimelines(history.timelines.values());
    // The feed in one pass: changes bucketed by instant, each bucket already in the list's order.
    const buckets = new Map<number, { lines: Timeline[]; indices: number[] }>();
    for (const timeline of history.order) {
      for (let i = 0; i < timeline.at.length; i++) {
        const at = timeline.at[i];
        let bucket = buckets.get(at);
        if (!bucket) buckets.set(at, (bucket = { lines: [], indices: [] }));
        bucket.lines.push(timeline);
        bucket.indices.push(i);
      }
      if ((++n & 255) === 0) yield;
    }
    for (const at of [...buckets.keys()].sort((a, b) => a - b)) {
      const { lines, indices } = buckets.get(at)!;
      // A first write holds every product: a bucket of 100,000 in one step held the loop 20 ms.
      for (let i = 0; i < lines.length; i++) {
        history.feed.push(at, lines[i], indices[i]);
        if ((i & 1023) === 1023) yield;
      }
      buckets.delete(at);
      yield;
    }
    // Appended one by one: a spread of 100,000 arguments or more overflows the stack.
    for (const at of [...new Set(sources.writes)].sort((a, b) => a - b)) history.writes.push(at);
    yield* history.resetVersionsFrom(-Infinity);
    if (hashed) yield* history.hashFeed();
    return history;
  }

  /**
   * Applies the list's change-log entries after those applied already (`writes`, in the log's
   * order; `records`, the prices they name as stored now, by id), each write from its publication
   * instant on. Returns the earliest instant from which the list may differ (Infinity when nothing
   * was applied): what was prepared for that instant or later is stale. The feed's new changes are
   * hashed too, unless `hashed` is false (as build). A `hashFeed` running meanwhile stops.
   */
  *extend(
    writes: readonly ListWrite[],
    records: ReadonlyMap<number, PriceRecord>,
    { hashed = true } = {},
  ): Steps<number> {
    const fresh = writes.filter((write) => write.changeId > this.applied);
    if (fresh.length === 0) return Infinity;
    this.extending = true;
    try {
      return yield* this.extendWith(fresh, records, hashed);
    } finally {
      this.extending = false;
    }
  }

  private *extendWith(
    fresh: readonly ListWrite[],
    records: ReadonlyMap<number, PriceRecord>,
    hashed: boolean,
  ): Steps<number> {
    const from = fresh[0].at;
    const touched = new Set<Timeline>();
    let start = 0;
    while (start < fresh.length) {
      let end = start;
      while (end < fresh.length && fresh[end].at === fresh[start].at) end++;
      const at = fresh[start].at;
      const byKey = new Map<string, ListWrite[]>();
      for (let i = start; i < end; i++) {
        const rows = byKey.get(fresh[i].productKey);
        if (rows) rows.push(fresh[i]);
        else byKey.set(fresh[i].productKey, [fresh[i]]);
      }
      for (const [productKey, rows] of byKey) {
        const timeline = this.timeline(productKey);
        if (!timeline) continue;
        const live = new Map(timeline.live.map((held) => [held.record.id, held]));
        for (const row of rows) apply(live, row, records);
        timeline.truncate(at);
        const pieces: Piece[] = [];
        for (const held of live.values()) piecesOf(pieces, held.record, { from: at, validUntil: held.until }, Infinity);
        emit(timeline, pieces, at);
        for (const [id, held] of live) if (held.until !== null && held.until <= at) live.delete(id);
        timeline.live = live.size === 0 ? NONE_LIVE : [...live.values()];
        touched.add(timeline);
      }
      if (this.writes.length === 0 || this.writes[this.writes.length - 1] < at) this.writes.push(at);
      else if (!this.writes.includes(at))
        this.writes.splice(
          firstIndexWhere(this.writes, (w) => w > at),
          0,
          at,
        );
      start = end;
      yield;
    }
    this.applied = fresh[fresh.length - 1].changeId;
    yield* this.refeedFrom(from, touched);
    yield* this.resetVersionsFrom(from);
    this.extending = false;
    if (hashed) yield* this.hashFeed();
    this.extensions.push(from);
    return from;
  }

  /** How many times the history was extended: what was made from it at a revision is checked by changedSince. */
  get revision(): number {
    return this.extensions.length;
  }

  /**
   * The earliest instant from which the list changed after `revision` (Infinity when it did not):
   * an answer made then for an instant before it is still right.
   */
  changedSince(revision: number): number {
    let from = Infinity;
    for (let i = revision; i < this.extensions.length; i++) from = Math.min(from, this.extensions[i]);
    return from;
  }

  /** The change-log entry applied last. */
  get lastChangeId(): number {
    return this.applied;
  }

  /** The instant of the version in force at `at` (the latest not after it); -Infinity before any. */
  versionAt(at: number): number {
    const i = firstIndexWhere(this.versions, (version) => version > at) - 1;
    return i < 0 ? -Infinity : this.versions[i];
  }

  /** The first version after `at`; Infinity when none is known. */
  nextVersionAfter(at: number): number {
    const i = firstIndexWhere(this.versions, (version) => version > at);
    return i < this.versions.length ? this.versions[i] : Infinity;
  }

  /**
   * The public list at `at`: every product's entry in force then, `last_changed` and the versions
   * around it. With `keep` (the present and the instants just ahead), each entry's bytes are kept
   * on its timeline, so that the next list serializes only the entries that changed.
   */
  *listAt(at: number, keep = false): Steps<ListAt> {
    const prices: PriceRecord[] = [];
    const families: number[] = [];
    const entries: string[] = [];
    const order = this.order;
    for (let n = 0; n < order.length; n++) {
      const timeline = order[n];
      const i = timeline.indexAt(at);
      if (i >= 0 && timeline.records[i] !== null) {
        prices.push(timeline.entry(i)!);
        families.push(timeline.family);
        entries.push(timeline.text(i, keep));
      }
      if ((n & 127) === 127) yield;
    }
    const v = firstIndexWhere(this.versions, (version) => version > at);
    return {
      at,
      prices,
      families,
      entries,
      lastChanged: v > 0 ? this.versions[v - 1] : null,
      previousChange: v > 1 ? this.versions[v - 2] : null,
      nextChange: v < this.versions.length ? this.versions[v] : Infinity,
    };
  }

  /**
   * The changes after `position` with instants before `before`, at most `limit`; `more` when more
   * such follow. Only hashed changes are served: none is served before its hash is known. In steps
   * (a page of a thousand changes, hashed and read, held the event loop 20 ms at an instance's
   * start): when an extension ends meanwhile, the read starts again, so that what it returns was
   * read from one revision.
   */
  *changesAfter(
    position: FeedPosition,
    limit: number,
    before: number,
  ): Steps<{ changes: ListChange[]; more: boolean }> {
    read: for (;;) {
      const revision = this.extensions.length;
      const start = this.indexAfter(position);
      const end = this.sizeBefore(before);
      const stop = Math.min(end, start + limit);
      const changes: ListChange[] = [];
      const chain = start < stop ? this.chainFrom(start) : undefined;
      for (let i = start; i < stop; i++) {
        const timeline = this.feed.timeline(i);
        const j = this.feed.entry(i);
        changes.push({
          position: i,
          hash: Buffer.from(chain!.next(i)),
          at: this.feed.at(i),
          productKey: timeline.productKey,
          family: timeline.family,
          sortKey: timeline.sortKey,
          before: timeline.entry(j - 1),
          after: timeline.entry(j),
        });
        if ((i & 63) === 63) {
          yield;
          if (this.extensions.length !== revision) continue read;
        }
      }
      return { changes, more: stop < end };
    }
  }

  /** The number of changes of the feed (for metrics and tests). */
  get changeCount(): number {
    return this.feed.size;
  }

  /** How many changes of the feed have instants before `before`: the size of the chain served then. */
  sizeBefore(before: number): number {
    return Math.min(this.chained, this.feed.firstFrom(before));
  }

  /** The head of the chain of the feed's first `size` changes (core/feed-chain.ts); `size` at most sizeBefore's. */
  chainHead(size: number): Buffer {
    if (size > this.chained) throw new RangeError(`the feed's first ${size} changes are not hashed yet`);
    return Buffer.from(this.chainFrom(size).head);
  }

  /**
   * The chain from its head before the change at `position` (hashed already) on: `head`, and
   * `next(i)` for each following change in turn, the hash of change i (in a buffer reused by the
   * next call). The head is the kept one before it, with the changes since hashed again.
   */
  private chainFrom(position: number): { readonly head: Buffer; next(i: number): Buffer } {
    const stride = Math.floor(position / CHAIN_STRIDE);
    const head = Buffer.from(this.chain.subarray(32 * stride, 32 * stride + 32));
    const leaves = new FeedLeaves(this.feed);
    const hasher = new ChainHasher();
    const next = (i: number): Buffer => {
      hasher.hashPartsInto(head, leaves.partsAt(i), head, 0);
      return head;
    };
    for (let i = stride * CHAIN_STRIDE; i < position; i++) next(i);
    return { head, next };
  }

  /** Whether every change of the feed is hashed (`changesAfter` serves only hashed changes). */
  get hashed(): boolean {
    return this.chained === this.feed.size;
  }

  /**
   * Hashes the feed's changes from the first not hashed yet (or made again since) to its end, in
   * steps; returns early, the rest not hashed, when `stop` says so or a write is being or was
   * applied meanwhile (`extend` changes the feed in steps of its own: each change here is hashed in
   * one step, from the feed as it is then).
   */
  *hashFeed(stop: () => boolean = () => false): Steps<void> {
    const revision = this.extensions.length;
    if (this.chained === this.feed.size || this.extending) return;
    const leaves = new FeedLeaves(this.feed);
    const hasher = new ChainHasher();
    const head = this.chainFrom(this.chained).head;
    while (this.chained < this.feed.size && !this.extending && this.extensions.length === revision && !stop()) {
      const i = this.chained;
      hasher.hashPartsInto(head, leaves.partsAt(i), head, 0);
      if ((i + 1) % CHAIN_STRIDE === 0) {
        const kept = (i + 1) / CHAIN_STRIDE;
        if (this.chain.length < 32 * (kept + 1)) {
          const needed = 32 * (Math.floor(this.feed.size / CHAIN_STRIDE) + 1);
          const grown = Buffer.alloc(Math.max(needed, this.chain.length + (this.chain.length >> 3)));
          this.chain.copy(grown, 0, 0, 32 * kept);
          this.chain = grown;
        }
        head.copy(this.chain, 32 * kept);
      }
      this.chained = i + 1;
      if ((i & 63) === 63) yield;
    }
  }

  /**
   * The timeline of `productKey`, made when new (and put in the list's order, unless the caller
   * orders every timeline itself); `undefined` for a key of no family (never published).
   */
  private timeline(productKey: string, ordered = true): Timeline | undefined {
    const held = this.timelines.get(productKey);
    if (held) return held;
    const parts = parseProductKey(productKey);
    if (!parts) return undefined; // the database refuses such keys; never publish one
    const timeline = new Timeline(this.lines.length, productKey, parts.familyOrder, naturalKey(productKey).sortKey);
    this.lines.push(timeline);
    this.timelines.set(productKey, timeline);
    if (ordered) {
      const at = firstIndexWhere(this.order, (other) => inListOrder(other, timeline) > 0);
      this.order = [...this.order.slice(0, at), timeline, ...this.order.slice(at)];
    }
    return timeline;
  }

  /** The feed's changes from `from` on made again: those of `touched` anew, the others kept. */
  private *refeedFrom(from: number, touched: ReadonlySet<Timeline>): Steps<void> {
    const start = this.feed.firstFrom(from);
    const tail: [number, Timeline, number][] = [];
    for (let i = start; i < this.feed.size; i++) {
      const timeline = this.feed.timeline(i);
      if (!touched.has(timeline)) tail.push([this.feed.at(i), timeline, this.feed.entry(i)]);
    }
    for (const timeline of touched) {
      const first = firstIndexWhere(timeline.at, (at) => at >= from);
      for (let i = first; i < timeline.at.length; i++) tail.push([timeline.at[i], timeline, i]);
    }
    yield;
    tail.sort((a, b) => a[0] - b[0] || inListOrder(a[1], b[1]));
    this.feed.size = start;
    this.chained = Math.min(this.chained, start);
    for (const [at, timeline, i] of tail) this.feed.push(at, timeline, i);
  }

  /** The versions from `from` on made again, from the feed and the writes, in steps. */
  private *resetVersionsFrom(from: number): Steps<void> {
    const kept = firstIndexWhere(this.versions, (version) => version >= from);
    const later = new Set<number>();
    for (let i = this.feed.firstFrom(from); i < this.feed.size; i++) {
      later.add(this.feed.at(i));
      if ((i & 4095) === 4095) yield;
    }
    for (let i = firstIndexWhere(this.writes, (at) => at >= from); i < this.writes.length; i++)
      later.add(this.writes[i]);
    this.versions.length = kept;
    for (const at of [...later].sort((a, b) => a - b)) this.versions.push(at);
  }

  /** The index of the first change of the feed after `position`. */
  private indexAfter(position: FeedPosition): number {
    const parts = position.productKey === '' ? undefined : parseProductKey(position.productKey);
    const family = parts ? parts.familyOrder : -1;
    const sortKey = parts ? naturalKey(position.productKey).sortKey : '';
    return firstIndexOf(this.feed.size, (i) => {
      const line = this.feed.timeline(i);
      return (
        (this.feed.at(i) - position.at ||
          line.family - family ||
          compareCodePoints(line.sortKey, sortKey) ||
          compareCodePoints(line.productKey, position.productKey)) > 0
      );
    });
  }
}

/** log2 of the changes a chunk of the feed holds at most (65,536: 1 MiB of columns). */
const CHUNK_BITS = 16;
const CHUNK = 1 << CHUNK_BITS;

/**
 * The feed: each change's instant, its product's timeline (by number) and the index of its entry
 * after, in typed arrays: 16 bytes a change (arrays of numbers and references took 24 and more,
 * with room to grow, 35 MB at five years of history). In chunks of CHUNK changes, each grown by
 * doubling: a change appends to the last chunk, never copying the others (one array at five
 * years, grown by an eighth, copied 21 MB and held the event loop 55 ms at the first change after
 * start-up).
 */
class Feed {
  private readonly instants: Float64Array[] = [];
  private readonly lineNumbers: Int32Array[] = [];
  private readonly entries: Int32Array[] = [];
  /** The changes held (the chunks may hold room for more). */
  size = 0;

  constructor(private readonly lines: readonly Timeline[]) {}

  /** The instant of change i. */
  at(i: number): number {
    return this.instants[i >>> CHUNK_BITS][i & (CHUNK - 1)];
  }

  timeline(i: number): Timeline {
    return this.lines[this.lineNumbers[i >>> CHUNK_BITS][i & (CHUNK - 1)]];
  }

  /** The index of change i's entry after in its timeline. */
  entry(i: number): number {
    return this.entries[i >>> CHUNK_BITS][i & (CHUNK - 1)];
  }

  push(at: number, timeline: Timeline, entry: number): void {
    const chunk = this.size >>> CHUNK_BITS;
    const i = this.size & (CHUNK - 1);
    if (chunk === this.instants.length || i === this.instants[chunk].length) this.grow(chunk, i);
    this.instants[chunk][i] = at;
    this.lineNumbers[chunk][i] = timeline.number;
    this.entries[chunk][i] = entry;
    this.size++;
  }

  /** The position of the first change at or after `instant` (`size` when none is). */
  firstFrom(instant: number): number {
    return firstIndexOf(this.size, (i) => this.at(i) >= instant);
  }

  /** Chunk `chunk`, holding `held` changes, made twice as large (CHUNK at most), or made. */
  private grow(chunk: number, held: number): void {
    const length = Math.min(CHUNK, Math.max(16, 2 * held));
    const grown = <T extends Float64Array | Int32Array>(chunks: T[], made: T): void => {
      if (chunk < chunks.length) made.set(chunks[chunk].subarray(0, held));
      chunks[chunk] = made;
    };
    grown(this.instants, new Float64Array(length));
    grown(this.lineNumbers, new Int32Array(length));
    grown(this.entries, new Int32Array(length));
  }
}

/**
 * The leaves of a feed's changes (core/feed-chain.ts). Each entry's text is written anew for each
 * leaf that holds it (twice: after one change, before the product's next): kept from one to the
 * next, a million of them lived long enough to be promoted, and the old generation grew by about
 * 150 MB of dead text while the feed was hashed, each young collection copying them (13-15 ms).
 */
class FeedLeaves {
  private readonly writer = new LeafWriter();
  /** Each timeline's dimensions member, written once. */
  private readonly dimensions = new Map<Timeline, string>();

  constructor(private readonly feed: Feed) {}

  /** The leaf of the change at `position`, in parts (ChainHasher.hashPartsInto). */
  partsAt(position: number): string[] {
    const timeline = this.feed.timeline(position);
    const j = this.feed.entry(position);
    let dimensions = this.dimensions.get(timeline);
    if (dimensions === undefined) {
      dimensions = this.writer.dimensionsOf(timeline.productKey);
      this.dimensions.set(timeline, dimensions);
    }
    const before = this.entryText(timeline, j - 1, dimensions);
    const after = this.entryText(timeline, j, dimensions);
    const change = { at: this.feed.at(position), productKey: timeline.productKey, family: timeline.family };
    return this.writer.leafParts(change, before, after);
  }

  private entryText(timeline: Timeline, j: number, dimensions: string): string {
    const record = j < 0 ? null : timeline.records[j];
    return record === null ? 'null' : this.writer.entryOf(record, timeline.shownUntil(j), dimensions);
  }
}

/** Applies one change-log entry to the prices a write left. */
function apply(live: Map<number, Held>, row: ListWrite, records: ReadonlyMap<number, PriceRecord>): void {
  if (row.set) {
    // A price withdrawn since is gone: it never took effect, so it was never listed.
    const record = records.get(row.set.id);
    if (record) live.set(record.id, { record, until: row.set.validUntil });
  }
  for (const end of row.ends ?? []) {
    const held = live.get(end.id) ?? (records.has(end.id) ? { record: records.get(end.id)! } : undefined);
    if (held) live.set(end.id, { record: held.record, until: end.validUntil });
  }
  if (row.deleted !== undefined) live.delete(row.deleted);
}

/** Where `record` is listed while its end is `end.validUntil`, from `end.from` until `next`. */
function piecesOf(pieces: Piece[], record: PriceRecord, end: KnownEnd, next: number): void {
  const start = Math.max(end.from, record.validFrom);
  const stop = Math.min(next, end.validUntil ?? Infinity);
  if (start < stop) pieces.push({ start, end: stop, record, until: end.validUntil });
}

/**
 * Appends the changes `pieces` (of one product, never overlapping) make to `timeline`; from `from`
 * on when given (a write: the product is not listed from then until its first piece).
 */
function emit(timeline: Timeline, pieces: Piece[], from?: number): void {
  pieces.sort((a, b) => a.start - b.start);
  if (from !== undefined && (pieces.length === 0 || pieces[0].start > from)) timeline.push(from, null, null);
  let end = -Infinity;
  for (const piece of pieces) {
    if (end !== -Infinity && piece.start > end) timeline.push(end, null, null);
    timeline.push(piece.start, piece.record, piece.until);
    end = piece.end;
  }
  if (end !== -Infinity && end !== Infinity) timeline.push(end, null, null);
}

/** Whether the list shows the same entry (the key is the timeline's): the same terms and window. */
function sameEntry(a: PriceRecord | null, aUntil: number, b: PriceRecord | null, bUntil: number): boolean {
  if (a === null || b === null) return a === b;
  return (
    (a === b ||
      (a.unitType === b.unitType &&
        a.unitCount === b.unitCount &&
        a.amount === b.amount &&
        a.validFrom === b.validFrom)) &&
    (aUntil === bUntil || (Number.isNaN(aUntil) && Number.isNaN(bUntil)))
  );
}

function inListOrder(a: Timeline, b: Timeline): number {
  return (
    a.family - b.family || compareCodePoints(a.sortKey, b.sortKey) || compareCodePoints(a.productKey, b.productKey)
  );
}

/** The timelines in the list's order, sorted in steps: 100,000 of them at once held the event loop 60 ms and more. */
function* sortedTimelines(timelines: Iterable<Timeline>): Steps<Timeline[]> {
  const all = [...timelines];
  yield;
  return yield* sortInSteps(all, inListOrder);
}
