import fc from 'fast-check';
import type { KnownEnd } from './end-table';
import { ListHistory } from './list-history';
import { priceListDocument, type ListAt } from './price-list';
import type { PriceRecord } from './price-record';
import { presentCut } from './present-cut';
import { runNow } from './slices';

// At start-up an instance reads the list prices whose listing may reach the present cut
// (PriceSnapshotReads, LISTED_FROM_CUT) and serves the list from `heldFrom` on before it reads the
// rest: the list it serves then must be the list of the whole book, byte for byte, with the same
// versions around it. Books as writes leave them: each write of list prices sets new prices (now
// or scheduled, ending the one before at its start) or ends prices, from its publication instant on.

const DAY = 86_400_000;
const START = Date.parse('2026-01-01T00:00:00Z');

interface Book {
  readonly records: PriceRecord[];
  readonly ends: Map<number, KnownEnd[]>;
  /** When each record's end was set (price_record.end_set_at). */
  readonly endSetAt: Map<number, number>;
  readonly writes: number[];
}

type Action =
  { kind: 'set'; key: number; offsetDays: number; amount: number } | { kind: 'end'; key: number; offsetDays: number };

const action = fc.oneof(
  fc.record({
    kind: fc.constant('set' as const),
    key: fc.nat(4),
    offsetDays: fc.nat(5),
    amount: fc.nat(3),
  }),
  fc.record({ kind: fc.constant('end' as const), key: fc.nat(4), offsetDays: fc.nat(5) }),
);
/** Writes at least ten days apart, each with what it does (no action: a write of nothing listed). */
const writes = fc.array(fc.tuple(fc.integer({ min: 10, max: 40 }), fc.array(action, { maxLength: 4 })), {
  minLength: 1,
  maxLength: 9,
});

function bookOf(planned: readonly [number, readonly Action[]][]): Book {
  const book: Book = { records: [], ends: new Map(), endSetAt: new Map(), writes: [] };
  const open = new Map<number, PriceRecord>();
  let at = START;
  let id = 1;
  const end = (record: PriceRecord, validUntil: number, setAt: number): PriceRecord => {
    const ended = { ...record, validUntil };
    book.records[book.records.indexOf(record)] = ended;
    book.ends.set(record.id, [
      { from: record.recordedAt!, validUntil: null },
      { from: setAt, validUntil },
    ]);
    book.endSetAt.set(record.id, setAt);
    return ended;
  };
  for (const [gapDays, actions] of planned) {
    at += gapDays * DAY;
    let wrote = false;
    const touched = new Set<number>();
    for (const step of actions) {
      // One change of a key per write: an end, then a price from before that end, would overlap it.
      if (touched.has(step.key)) continue;
      const previous = open.get(step.key);
      const instant = at + step.offsetDays * DAY;
      if (step.kind === 'end') {
        if (!previous) continue;
        end(previous, Math.max(instant, previous.validFrom + 1), at);
        open.delete(step.key);
      } else {
        if (previous) end(previous, Math.max(instant, previous.validFrom + 1), at);
        const record: PriceRecord = {
          id: id++,
          productKey: `compute.k${step.key}.1`,
          organizationId: null,
          unitType: 'seconds',
          unitCount: 3600,
          amount: `0.${step.amount + 1}`,
          validFrom: Math.max(instant, (previous?.validFrom ?? -Infinity) + 1),
          validUntil: null,
          recordedAt: at,
          supersededBy: null,
        };
        book.records.push(record);
        open.set(step.key, record);
      }
      touched.add(step.key);
      wrote = true;
    }
    if (wrote) book.writes.push(at);
  }
  return book;
}

const historyOf = (book: Book, records: readonly PriceRecord[]): ListHistory =>
  runNow(ListHistory.build({ records, ends: book.ends, writes: book.writes, lastChangeId: 0 }, { hashed: false }));

/** The list at `at` as served: the document's bytes and the versions around it. */
function served(list: ListAt): unknown {
  return [JSON.stringify(priceListDocument(list)), list.lastChanged, list.previousChange, list.nextChange];
}

describe('the present read first', () => {
  it('serves the list of the whole book from heldFrom on: its document, last_changed, and the versions around it', () => {
    fc.assert(
      fc.property(writes, fc.nat(400), fc.array(fc.nat(400 * DAY), { maxLength: 5 }), (planned, readDays, later) => {
        const book = bookOf(planned);
        const readAt = START + readDays * DAY;
        const present = presentCut(book.writes, readAt);
        fc.pre(present !== undefined);
        // LISTED_FROM_CUT, as SQL reads it: no end, or its end or the end's last change at or after the cut.
        const listedFromCut = (record: PriceRecord) =>
          record.validUntil === null ||
          Math.max(record.validUntil, book.endSetAt.get(record.id) ?? -Infinity) >= present.cut;
        const whole = historyOf(book, book.records);
        const first = historyOf(book, book.records.filter(listedFromCut));
        const instants = new Set([present.heldFrom, readAt, ...later.map((ms) => present.heldFrom + ms)]);
        for (let t = present.heldFrom; Number.isFinite(t); t = whole.nextVersionAfter(t)) {
          instants
            .add(t)
            .add(t - 1)
            .add(t + 1);
        }
        for (const t of instants) {
          if (t < present.heldFrom) continue;
          expect(served(runNow(first.listAt(t)))).toEqual(served(runNow(whole.listAt(t))));
          expect(first.versionAt(t)).toBe(whole.versionAt(t));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('needs three writes published by the read: the cut just before the third latest, held from the second', () => {
    const w = (days: number) => START + days * DAY;
    expect(presentCut([w(1), w(2)], w(10))).toBeUndefined();
    expect(presentCut([w(3), w(1), w(2), w(20)], w(10))).toEqual({ cut: w(1) - 1, heldFrom: w(2) });
    expect(presentCut([w(1), w(2), w(3), w(4)], w(3))).toEqual({ cut: w(1) - 1, heldFrom: w(2) });
  });
});
