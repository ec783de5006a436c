import { firstIndexWhere } from './bisect';

describe('firstIndexWhere', () => {
  it('finds the first item the predicate holds for, as a scan would', () => {
    const sorted = [1, 3, 3, 7];
    for (const ms of [0, 1, 2, 3, 6, 7, 8]) {
      const scanned = sorted.findIndex((n) => n > ms);
      expect(firstIndexWhere(sorted, (n) => n > ms)).toBe(scanned === -1 ? sorted.length : scanned);
    }
    expect(firstIndexWhere([], () => true)).toBe(0);
  });
});
