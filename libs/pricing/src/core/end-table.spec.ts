import fc from 'fast-check';
import { EndTable, type KnownEnd } from './end-table';

// The table of known ends (core/end-table.ts) answers as the Map it replaces: for records read in
// any order, ends changed once or replayed, and tables joined.

const instant = fc.integer({ min: 0, max: 4_000_000_000_000 });
const end = fc.option(instant, { nil: null });

/** A record's ends as read: changed once (the record's own columns) or replayed from the log. */
const row = fc.oneof(
  fc.record({ kind: fc.constant('once' as const), from: instant, before: end, setAt: instant, until: end }),
  fc.record({
    kind: fc.constant('replayed' as const),
    ends: fc.array(fc.record({ from: instant, validUntil: end }), { minLength: 1, maxLength: 4 }),
  }),
);
const rows = fc.uniqueArray(fc.tuple(fc.integer({ min: 1, max: 2 ** 40 }), row), {
  selector: ([id]) => id,
  maxLength: 60,
});

type Row = [
  number,
  (
    | { kind: 'once'; from: number; before: number | null; setAt: number; until: number | null }
    | { kind: 'replayed'; ends: KnownEnd[] }
  ),
];

function tableAndMap(read: readonly Row[]): [EndTable, Map<number, KnownEnd[]>] {
  const builder = EndTable.builder();
  const map = new Map<number, KnownEnd[]>();
  for (const [id, r] of read) {
    if (r.kind === 'once') {
      builder.changedOnce(id, r.from, r.before, r.setAt, r.until);
      map.set(id, [
        { from: r.from, validUntil: r.before },
        { from: r.setAt, validUntil: r.until },
      ]);
    } else {
      builder.set(id, [...r.ends]);
      map.set(id, [...r.ends]);
    }
  }
  return [builder.build(), map];
}

describe('EndTable', () => {
  it('answers every id as a Map of the same ends would, and nothing for others', () => {
    fc.assert(
      fc.property(rows, fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { maxLength: 10 }), (read, others) => {
        const [table, map] = tableAndMap(read);
        for (const id of [...map.keys(), ...others]) expect(table.get(id)).toEqual(map.get(id));
        expect(new Map(table.entries())).toEqual(map);
        expect(table.size).toBe(map.size);
        const froms = [...map.values()].flat().map((e) => e.from);
        expect(table.latestFrom).toBe(Math.max(-Infinity, ...froms));
      }),
    );
  });

  it('with() another table or a few ends: theirs win for an id in both, the rest kept', () => {
    fc.assert(
      fc.property(rows, rows, fc.boolean(), (a, b, asEntries) => {
        const [first, firstMap] = tableAndMap(a);
        const [second, secondMap] = tableAndMap(b);
        const joined = asEntries ? first.with(secondMap) : first.with(second);
        const expected = new Map([...firstMap, ...secondMap]);
        for (const id of expected.keys()) expect(joined.get(id)).toEqual(expected.get(id));
        expect(joined.size).toBe(expected.size);
        // The first table is as it was.
        for (const id of firstMap.keys()) expect(first.get(id)).toEqual(firstMap.get(id));
      }),
    );
  });

  it('sorts ids too large to pack with their indices', () => {
    const builder = EndTable.builder();
    const ids = [2 ** 52, 3, 2 ** 51 + 1, 7];
    for (const id of ids) builder.changedOnce(id, id % 1000, null, 1, 2);
    const table = builder.build();
    expect([...table.entries()].map(([id]) => id)).toEqual([...ids].sort((x, y) => x - y));
    for (const id of ids) expect(table.get(id)?.[0].from).toBe(id % 1000);
  });

  it('merges a large table into its columns (organizations’ prices read after the list’s)', () => {
    const a = EndTable.builder();
    const b = EndTable.builder();
    for (let i = 0; i < 10_000; i++) (i % 2 === 0 ? a : b).changedOnce(i, i, null, i + 1, null);
    const joined = a.build().with(b.build());
    expect(joined.size).toBe(10_000);
    // Merged: one set of columns, in id order (a few ends are held beside them, after).
    expect([...joined.entries()].map(([id]) => id)).toEqual([...Array(10_000).keys()]);
    expect(joined.get(9_999)).toEqual([
      { from: 9_999, validUntil: null },
      { from: 10_000, validUntil: null },
    ]);
    expect(joined.latestFrom).toBe(10_000);
  });
});
