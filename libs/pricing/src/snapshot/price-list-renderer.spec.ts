import { renderDeadlineMs } from './price-list-renderer';

// The render worker's limit (price-list-renderer.ts): long enough that a large book's render on a
// busy machine is never ended as hung, short enough that a hung worker of a small book is
// replaced within seconds; the worker itself is watched in price-list-renderer.built-spec.ts.

describe('renderDeadlineMs', () => {
  it('gives any list 10 s, however small', () => {
    expect(renderDeadlineMs(0)).toBe(10_000);
    expect(renderDeadlineMs(1_000)).toBe(10_100);
  });

  it.each([
    [100_000, 20_000],
    [1_000_000, 110_000],
    [10_000_000, 1_010_000],
  ])('grows by 0.1 ms a price: %d prices have %d ms', (records, ms) => {
    expect(renderDeadlineMs(records)).toBe(ms);
  });

  it('grows in proportion to the book: each 100,000 more prices add 10 s, at any size', () => {
    for (const records of [0, 1, 4_999, 100_000, 2_500_000]) {
      expect(renderDeadlineMs(records + 100_000) - renderDeadlineMs(records)).toBeCloseTo(10_000, 6);
    }
  });

  it('leaves 100,000 prices four times the slowest render measured (4.2 s with both cores busy)', () => {
    expect(renderDeadlineMs(100_000)).toBeGreaterThanOrEqual(4 * 4_200);
  });
});
