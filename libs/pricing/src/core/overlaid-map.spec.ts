import fc from 'fast-check';
import { OverlaidMap } from './overlaid-map';
import { runNow } from './slices';

describe('OverlaidMap', () => {
  it('holds what a Map changed the same way holds, whether merged or not, and the maps before are unchanged', () => {
    const change = fc.array(fc.tuple(fc.integer({ min: 0, max: 6_000 }), fc.option(fc.integer(), { nil: undefined })), {
      maxLength: 3_000,
    });
    fc.assert(
      fc.property(fc.array(change, { maxLength: 6 }), (changes) => {
        const expected = new Map<number, number>([
          [1, 1],
          [2, 2],
        ]);
        let map = OverlaidMap.of(new Map(expected));
        const earlier: [OverlaidMap<number, number>, Map<number, number>][] = [];
        for (const replaced of changes) {
          earlier.push([map, new Map(expected)]);
          map = runNow(map.with(new Map(replaced)));
          for (const [key, value] of new Map(replaced)) {
            if (value === undefined) expected.delete(key);
            else expected.set(key, value);
          }
        }
        expect(new Map(map.entries())).toEqual(expected);
        expect([...map.values()].sort()).toEqual([...expected.values()].sort());
        for (const key of [0, 1, 2, 3, 5_999]) expect(map.get(key)).toBe(expected.get(key));
        for (const [before, held] of earlier) expect(new Map(before.entries())).toEqual(held);
      }),
      { numRuns: 60 },
    );
  });

  it('merges past 4,096 changed keys: the map made still holds every change, the one before it its own', () => {
    const base = OverlaidMap.of(new Map([[-1, -1]]));
    const some = runNow(base.with(new Map(Array.from({ length: 3_000 }, (_, i) => [i, i] as [number, number]))));
    const more = runNow(
      some.with(new Map(Array.from({ length: 3_000 }, (_, i) => [2_000 + i, -i] as [number, number | undefined]))),
    );
    const removed = runNow(more.with(new Map([[-1, undefined]])));
    expect(new Map(removed.entries()).size).toBe(5_000);
    expect([removed.get(1_999), removed.get(2_000), removed.get(4_999), removed.get(-1)]).toEqual([
      1_999,
      -0,
      -2_999,
      undefined,
    ]);
    expect(new Map(some.entries()).size).toBe(3_001);
    expect(some.get(2_000)).toBe(2_000);
    expect(base.get(0)).toBeUndefined();
  });
});
