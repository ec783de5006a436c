import { seededRandom } from '../testing/seeded-random';
import { chainHash, changeLeaf, EMPTY_CHAIN_HEAD } from './feed-chain';
import { ListHistory, type KnownEnd, type ListWrite } from './list-history';
import { priceListDocument, type PriceListDocument } from './price-list';
import type { PriceRecord } from './price-record';
import { priceRecord } from './price-record.fixture';
import { runNow } from './slices';

const ms = (iso: string): number => Date.parse(iso);
const day = 86_400_000;
const W0 = ms('2026-01-10T00:00:00Z'); // the book's first write
const W1 = ms('2026-02-10T00:00:00Z'); // an immediate change
const W2 = ms('2026-03-10T00:00:00Z'); // an end set, ahead
const END = ms('2026-06-01T00:00:00Z');

// gp1: recorded at W0 from 2026-01-01 (a backfill), open; ended at W1 by a new price from W1.
const gp1 = priceRecord({ id: 1, validFrom: '2026-01-01T00:00:00Z', validUntil: W1, recordedAt: W0 });
const gp1Next = priceRecord({ id: 2, amount: '0.0500', validFrom: W1, recordedAt: W1 });
// io1: recorded at W0 from W0, its end set at W2 (to END), by a successor from END.
const io1 = priceRecord({ id: 3, productKey: 'storage.io1', validFrom: W0, validUntil: END, recordedAt: W0 });
const io1Next = priceRecord({ id: 4, productKey: 'storage.io1', amount: '0.2', validFrom: END, recordedAt: W2 });
const records: PriceRecord[] = [gp1, gp1Next, io1, io1Next];
// What the records keep of their ends' changes (price_record.end_set_at, end_before).
const ends = new Map<number, KnownEnd[]>([
  [
    1,
    [
      { from: W0, validUntil: null },
      { from: W1, validUntil: W1 },
    ],
  ],
  [
    3,
    [
      { from: W0, validUntil: null },
      { from: W2, validUntil: END },
    ],
  ],
]);
const built = runNow(ListHistory.build({ records, ends, writes: [W0, W1, W2], lastChangeId: 6 }));

const document = (history: ListHistory, at: number): PriceListDocument => priceListDocument(runNow(history.listAt(at)));
const everyChange = (history: ListHistory) =>
  runNow(history.changesAfter({ at: -Infinity, productKey: '' }, Number.MAX_SAFE_INTEGER, Infinity)).changes;

describe('ListHistory', () => {
  it('lists at an instant the prices as known then: no backfill before its write, no end before it was set', () => {
    expect(document(built, W0 - 1)).toEqual({
      currency: 'EUR',
      amounts_exclude_vat: true,
      last_changed: null,
      families: [],
    });
    const atW1 = document(built, W1 + 1).families[0].prices;
    expect(atW1.map((p) => [p.product_key, p.amount, p.valid_until])).toEqual([
      ['storage.gp1', '0.0500', null],
      ['storage.io1', '0.0480', null], // its end is set only at W2
    ]);
    expect(document(built, W2).families[0].prices[1].valid_until).toBe('2026-06-01T00:00:00Z');
    expect(document(built, W2).last_changed).toBe('2026-03-10T00:00:00Z');
  });

  it('gives each change of a product’s entry, in feed order: by instant, then the list’s order', () => {
    const feed = everyChange(built);
    expect(feed.map((c) => [c.at, c.productKey, c.before?.amount ?? null, c.after?.amount ?? null])).toEqual([
      [W0, 'storage.gp1', null, '0.0480'], // a backfill appears at its write, not at its valid_from
      [W0, 'storage.io1', null, '0.0480'],
      [W1, 'storage.gp1', '0.0480', '0.0500'],
      [W2, 'storage.io1', '0.0480', '0.0480'], // the end set: the entry shows valid_until from W2 on
      [END, 'storage.io1', '0.0480', '0.2'],
    ]);
    expect(feed[2].before?.validUntil).toBeNull(); // as the list showed it just before W1
    expect(feed[3].after?.validUntil).toBe(END);
  });

  it('pages the feed after a place: a key of an earlier family, the end, and a bound', () => {
    const after = (at: number, productKey: string) =>
      runNow(built.changesAfter({ at, productKey }, 10, Infinity)).changes.map((c) => [c.at, c.productKey]);
    expect(after(W0, '')).toHaveLength(5);
    expect(after(W0, 'storage.gp1')[0]).toEqual([W0, 'storage.io1']);
    expect(after(W0, 'compute.g2.4')).toHaveLength(5); // a family before storage
    expect(after(END, 'storage.io1')).toEqual([]);
    const bounded = runNow(built.changesAfter({ at: W0, productKey: '' }, 10, W2));
    expect(bounded.changes).toHaveLength(3);
    expect(runNow(built.changesAfter({ at: W0, productKey: '' }, 2, W2))).toMatchObject({ more: true });
  });

  it('knows the versions: the instants at which the document changed, writes included', () => {
    expect(built.versionAt(W0 - 1)).toBe(-Infinity);
    expect(built.versionAt(W1 + 5)).toBe(W1);
    expect(built.nextVersionAfter(W2)).toBe(END);
    expect(built.nextVersionAfter(END)).toBe(Infinity);
  });

  it('extends from a write’s instant on and says from when; entries already applied are skipped', () => {
    const history = runNow(
      ListHistory.build({
        records: [gp1, io1].map((r) => ({ ...r, validUntil: null })),
        ends: new Map(),
        writes: [W0],
        lastChangeId: 2,
      }),
    );
    const byId = new Map(records.map((r) => [r.id, r]));
    const rows: ListWrite[] = [
      { changeId: 3, at: W1, productKey: 'storage.gp1', set: { id: 2, validUntil: null } },
      { changeId: 4, at: W1, productKey: 'storage.gp1', ends: [{ id: 1, validUntil: W1 }] },
      { changeId: 5, at: W2, productKey: 'storage.io1', set: { id: 4, validUntil: null } },
      { changeId: 6, at: W2, productKey: 'storage.io1', ends: [{ id: 3, validUntil: END }] },
    ];
    const revision = history.revision;
    expect(runNow(history.extend(rows, byId))).toBe(W1);
    expect(history.changedSince(revision)).toBe(W1);
    expect(runNow(history.extend(rows, byId))).toBe(Infinity);
    expect(everyChange(history)).toEqual(everyChange(built));
    for (const at of [W0, W1, W2, END, END + day]) expect(document(history, at)).toEqual(document(built, at));
  });

  it('reads a page of the feed in steps, again from the start when an extension ends meanwhile', () => {
    const week = 7 * day;
    const records = Array.from({ length: 300 }, (_, i) =>
      priceRecord({ id: i + 1, amount: `0.${i % 10}1`, validFrom: W0 + i * week, validUntil: W0 + (i + 1) * week }),
    );
    const history = runNow(ListHistory.build({ records, ends: new Map(), writes: [W0], lastChangeId: 1 }));
    const start = { at: -Infinity, productKey: '' };
    const reading = history.changesAfter(start, 1000, Infinity);
    expect(reading.next().done).toBe(false); // a step read: 64 changes of 301
    const next = priceRecord({ id: 301, amount: '0.77', validFrom: W0 + 301 * week, recordedAt: W0 });
    const write: ListWrite = {
      changeId: 2,
      at: next.validFrom,
      productKey: next.productKey,
      set: { id: 301, validUntil: null },
    };
    runNow(history.extend([write], new Map([[next.id, next]])));
    const read = runNow(reading);
    expect(read.changes).toHaveLength(302);
    expect(read).toEqual(runNow(history.changesAfter(start, 1000, Infinity)));
  });

  it('holds a past of 200,000 versions (built, not spread as arguments: that overflowed the stack)', () => {
    const week = 7 * day;
    const records = Array.from({ length: 200_000 }, (_, i) =>
      priceRecord({ id: i + 1, amount: `0.${i % 10}1`, validFrom: W0 + i * week, validUntil: W0 + (i + 1) * week }),
    );
    const long = runNow(
      ListHistory.build({ records, ends: new Map(), writes: [W0], lastChangeId: 1 }, { hashed: false }),
    );
    expect(long.changeCount).toBe(200_001);
    expect(long.nextVersionAfter(W0 + 1)).toBe(W0 + week);
    // The feed is held in chunks of 65,536 changes: read across their edges (served once hashed), and extended past the last.
    runNow(long.hashFeed());
    for (const edge of [65_536, 131_072, 196_608]) {
      const { changes } = runNow(
        long.changesAfter({ at: W0 + (edge - 3) * week, productKey: 'storage.gp1' }, 4, Infinity),
      );
      expect(changes.map((c) => [c.position, c.at, c.after?.id])).toEqual(
        [edge - 2, edge - 1, edge, edge + 1].map((p) => [p, W0 + p * week, p + 1]),
      );
    }
    const next = priceRecord({ id: 200_001, amount: '0.77', validFrom: W0 + 200_001 * week, recordedAt: W0 });
    const write: ListWrite = {
      changeId: 2,
      at: next.validFrom,
      productKey: next.productKey,
      set: { id: next.id, validUntil: null },
    };
    expect(runNow(long.extend([write], new Map([[next.id, next]])))).toBe(next.validFrom);
    expect(long.changeCount).toBe(200_002);
    const { changes } = runNow(long.changesAfter({ at: W0 + 199_999 * week, productKey: 'storage.gp1' }, 10, Infinity));
    expect(changes.map((c) => [c.position, c.at, c.before?.id ?? null, c.after?.id ?? null])).toEqual([
      [200_000, W0 + 200_000 * week, 200_000, null],
      [200_001, next.validFrom, null, next.id],
    ]);
  });

  it('chains the feed: each change’s hash follows from the one before and its leaf, the head from the last', () => {
    const changes = everyChange(built);
    let previous = EMPTY_CHAIN_HEAD;
    for (const [i, change] of changes.entries()) {
      expect(change.position).toBe(i);
      previous = chainHash(previous, changeLeaf(change));
      expect(change.hash.toString('hex')).toBe(previous.toString('hex'));
      expect(built.chainHead(i + 1)).toEqual(change.hash);
    }
    expect(built.chainHead(0)).toEqual(EMPTY_CHAIN_HEAD);
    expect(built.sizeBefore(W1)).toBe(changes.filter((c) => c.at < W1).length);
    expect(() => built.chainHead(changes.length + 1)).toThrow(RangeError);
  });

  it('keeps the hashes of the changes before a write’s instant, and hashes anew every change from it on', () => {
    const history = runNow(ListHistory.build({ records, ends, writes: [W0, W1, W2], lastChangeId: 6 }));
    const before = everyChange(history);
    const later = W2 + 5 * day;
    const price = priceRecord({
      id: 9,
      productKey: 'storage.gp1',
      amount: '0.0400',
      validFrom: later,
      recordedAt: W2 + day,
    });
    const byId = new Map([...records, price].map((r) => [r.id, r]));
    expect(
      runNow(
        history.extend(
          [
            { changeId: 7, at: W2 + day, productKey: 'storage.gp1', set: { id: 9, validUntil: null } },
            { changeId: 8, at: W2 + day, productKey: 'storage.gp1', ends: [{ id: 2, validUntil: later }] },
          ],
          byId,
        ),
      ),
    ).toBe(W2 + day);
    const after = everyChange(history);
    const kept = before.filter((c) => c.at < W2 + day);
    expect(after.slice(0, kept.length)).toEqual(kept);
    let previous = history.chainHead(kept.length);
    for (const change of after.slice(kept.length)) {
      previous = chainHash(previous, changeLeaf(change));
      expect(change.hash).toEqual(previous);
    }
    expect(after.length).toBeGreaterThan(kept.length);
  });
});

// The property: writes made as the database's rules allow, applied one at a time (as instances
// reload), give the history built from the records as stored (as instances start), and both give
// what the list knew at every instant, computed naively.

interface Held {
  record: PriceRecord;
  until: number | null;
}

interface Book {
  /** Every price ever recorded, by id; a withdrawn one is not stored any more. */
  readonly records: Map<number, PriceRecord>;
  readonly withdrawn: Set<number>;
  /** Each write: its instant, its entries, and the state it left (what the list knew from it on). */
  readonly writes: { at: number; rows: ListWrite[]; state: Map<number, Held> }[];
  readonly ends: Map<number, KnownEnd[]>;
}

const KEYS = ['storage.gp1', 'storage.io1', 'compute.g2.4', 'network.vpc_egress'];

/** A book written by random writes that follow the price book's rules, a few days apart. */
function randomBook(random: () => number): Book {
  const book: Book = { records: new Map(), withdrawn: new Set(), writes: [], ends: new Map() };
  let state = new Map<number, Held>();
  let at = W0;
  let id = 1;
  let changeId = 1;
  const unit = (key: string) =>
    key.startsWith('compute')
      ? { unitType: 'seconds' as const, unitCount: 3600 }
      : key.startsWith('network')
        ? { unitType: 'gb' as const, unitCount: 1 }
        : { unitType: 'gib_hours' as const, unitCount: 730 };
  const endChanged = (held: Held, until: number | null) => {
    const ends = book.ends.get(held.record.id) ?? [{ from: held.record.recordedAt!, validUntil: held.until }];
    ends.push({ from: at, validUntil: until });
    book.ends.set(held.record.id, ends);
    held.until = until;
  };
  for (let w = 0; w < 12; w++) {
    const rows: ListWrite[] = [];
    state = new Map([...state].map(([k, held]) => [k, { ...held }]));
    for (const key of KEYS) {
      if (random() < 0.4) continue;
      const ofKey = [...state.values()].filter((h) => h.record.productKey === key);
      ofKey.sort((a, b) => a.record.validFrom - b.record.validFrom);
      const last = ofKey[ofKey.length - 1];
      const choice = random();
      const add = (validFrom: number, validUntil: number | null) => {
        const record = priceRecord({
          id: id++,
          productKey: key,
          ...unit(key),
          amount: `0.${Math.floor(random() * 90) + 10}`,
          validFrom,
          validUntil,
          recordedAt: at,
        });
        book.records.set(record.id, record);
        state.set(record.id, { record, until: validUntil });
        rows.push({ changeId: changeId++, at, productKey: key, set: { id: record.id, validUntil } });
      };
      if (!last) {
        // A first price: a backfill, from now, or scheduled; with an end or not.
        const from = at + Math.round((random() - 0.5) * 20) * day;
        add(from, random() < 0.3 ? from + (1 + Math.floor(random() * 30)) * day : null);
      } else if (last.until === null && choice < 0.5) {
        // A scheduled change: the open price ends where the new one starts.
        const from = Math.max(at, last.record.validFrom + day) + Math.floor(random() * 10) * day;
        endChanged(last, from);
        rows.push({ changeId: changeId++, at, productKey: key, ends: [{ id: last.record.id, validUntil: from }] });
        add(from, null);
      } else if (last.until === null && choice < 0.65) {
        // An end in the future, without a new price.
        const until = Math.max(at, last.record.validFrom + day) + Math.floor(random() * 10) * day;
        endChanged(last, until);
        rows.push({ changeId: changeId++, at, productKey: key, ends: [{ id: last.record.id, validUntil: until }] });
      } else if (last.record.validFrom > at && choice < 0.9) {
        // A withdrawal of a scheduled price: the price it ended gets its end back.
        state.delete(last.record.id);
        book.records.delete(last.record.id);
        book.withdrawn.add(last.record.id);
        const before = ofKey[ofKey.length - 2];
        const reopened = before && before.until === last.record.validFrom ? [before] : [];
        for (const held of reopened) endChanged(held, last.until);
        rows.push({
          changeId: changeId++,
          at,
          productKey: key,
          deleted: last.record.id,
          ...(reopened.length > 0 && { ends: reopened.map((h) => ({ id: h.record.id, validUntil: h.until })) }),
        });
      } else if (last.until !== null && last.until <= at) {
        add(at + Math.floor(random() * 5) * day, null); // a price again after a gap
      }
    }
    if (rows.length > 0) book.writes.push({ at, rows, state });
    at += (1 + Math.floor(random() * 20)) * day + Math.floor(random() * 1000);
  }
  return book;
}

/** The instants at which a write happened or what the list showed changed. */
function changeInstants(book: Book): number[] {
  return candidates(book).filter(
    (i) =>
      book.writes.some((w) => w.at === i) || JSON.stringify(shownAt(book, i)) !== JSON.stringify(shownAt(book, i - 1)),
  );
}

/** What the list showed at `t`: the prices the last write by then left, in force at `t`. */
function knownAt(book: Book, changes: readonly number[], t: number): PriceListDocument {
  let state = new Map<number, Held>();
  for (const write of book.writes) {
    if (write.at > t) break;
    state = write.state;
  }
  const shown = [...state.values()]
    .filter((h) => h.record.validFrom <= t && (h.until === null || t < h.until))
    .map((h) => ({ ...h.record, validUntil: h.until }));
  // last_changed: the latest instant up to t at which a write happened or what was shown changed.
  const last = Math.max(-Infinity, ...changes.filter((i) => i <= t));
  const history = runNow(ListHistory.build({ records: shown, ends: new Map(), writes: [], lastChangeId: 0 }));
  const doc = priceListDocument(runNow(history.listAt(t)));
  return { ...doc, last_changed: last === -Infinity ? null : new Date(last).toISOString().replace('.000Z', 'Z') };
}

function shownAt(book: Book, t: number): unknown[] {
  let state = new Map<number, Held>();
  for (const write of book.writes) if (write.at <= t) state = write.state;
  return [...state.values()]
    .filter((h) => h.record.validFrom <= t && (h.until === null || t < h.until))
    .map((h) => [h.record.productKey, h.record.amount, h.record.validFrom, h.until])
    .sort();
}

function candidates(book: Book): number[] {
  const all = new Set<number>();
  for (const write of book.writes) {
    all.add(write.at);
    for (const held of write.state.values()) {
      all.add(held.record.validFrom);
      if (held.until !== null) all.add(held.until);
    }
  }
  return [...all].sort((a, b) => a - b);
}

describe('ListHistory, on books written by the price book’s rules', () => {
  it('gives the same history applied write by write as built from the records as stored, and what the list knew', () => {
    const random = seededRandom(20261128);
    const batching = seededRandom(7);
    let longest = 0;
    for (let round = 0; round < 40; round++) {
      const book = randomBook(random);
      if (book.writes.length === 0) continue;
      const stored = [...book.records.values()];
      const writes = book.writes.map((w) => w.at);
      const lastChangeId = book.writes[book.writes.length - 1].rows.at(-1)!.changeId;
      const scratch = runNow(ListHistory.build({ records: stored, ends: book.ends, writes, lastChangeId }));
      const [first, ...later] = book.writes;
      const incremental = runNow(
        ListHistory.build({
          records: [...first.state.values()].map((h) => ({ ...h.record, validUntil: h.until })),
          ends: new Map(),
          writes: [first.at],
          lastChangeId: first.rows.at(-1)!.changeId,
        }),
      );
      for (const write of later) runNow(incremental.extend(write.rows, book.records));
      // An instance that started on an empty book and applied every write as it came.
      const fromEmpty = runNow(ListHistory.build({ records: [], ends: new Map(), writes: [], lastChangeId: 0 }));
      for (const write of book.writes) runNow(fromEmpty.extend(write.rows, book.records));
      expect(everyChange(fromEmpty)).toEqual(everyChange(scratch));
      longest = Math.max(longest, expectChained(scratch), expectChained(fromEmpty));
      // An instance that was behind and read several writes at once (withChanges reads every entry since).
      const batched = runNow(ListHistory.build({ records: [], ends: new Map(), writes: [], lastChangeId: 0 }));
      for (let i = 0; i < book.writes.length;) {
        const n = 1 + Math.floor(batching() * 3);
        runNow(
          batched.extend(
            book.writes.slice(i, i + n).flatMap((w) => w.rows),
            book.records,
          ),
        );
        i += n;
      }
      expect(everyChange(batched)).toEqual(everyChange(scratch));
      // An instance (re)started after write k, from the records as stored then, that applied the rest as they came.
      for (const [k, write] of book.writes.entries()) {
        const storedThen = [...write.state.values()].map((h) => ({ ...h.record, validUntil: h.until }));
        const endsThen = new Map(
          [...book.ends]
            .filter(([id]) => write.state.has(id))
            .map(([id, known]) => [id, known.filter((end) => end.from <= write.at)] as const),
        );
        const restarted = runNow(
          ListHistory.build({
            records: storedThen,
            ends: endsThen,
            writes: book.writes.slice(0, k + 1).map((w) => w.at),
            lastChangeId: write.rows.at(-1)!.changeId,
          }),
        );
        for (const later of book.writes.slice(k + 1)) runNow(restarted.extend(later.rows, book.records));
        expect({ round, k, changes: everyChange(restarted) }).toEqual({ round, k, changes: everyChange(scratch) });
      }
      const changes = changeInstants(book);
      for (const t of candidates(book).flatMap((i) => [i - 1, i, i + 1])) {
        const known = knownAt(book, changes, t);
        expect({ round, t, doc: document(scratch, t) }).toEqual({ round, t, doc: known });
        expect({ round, t, inc: document(incremental, t) }).toEqual({ round, t, inc: known });
        expect({ round, t, empty: document(fromEmpty, t) }).toEqual({ round, t, empty: known });
      }
      expect(everyChange(incremental)).toEqual(everyChange(scratch));
    }
    // Feeds long enough that changes between two heads kept are hashed again when served.
    expect(longest).toBeGreaterThan(40);
  });
});

/**
 * Checks that each change's hash follows from the one before and its leaf, that the head of the
 * first n changes is the hash of the nth, and that a page starting anywhere serves the same change;
 * returns the feed's length.
 */
function expectChained(history: ListHistory): number {
  const changes = everyChange(history);
  let previous = EMPTY_CHAIN_HEAD;
  for (const [i, change] of changes.entries()) {
    expect(history.chainHead(i)).toEqual(previous);
    previous = chainHash(previous, changeLeaf(change));
    expect(change.hash).toEqual(previous);
    const after = i === 0 ? { at: -Infinity, productKey: '' } : changes[i - 1];
    expect(runNow(history.changesAfter(after, 2, Infinity)).changes[0]).toEqual(change);
  }
  expect(history.chainHead(changes.length)).toEqual(previous);
  return changes.length;
}
