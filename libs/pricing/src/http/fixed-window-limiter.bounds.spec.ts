import { FixedWindowLimiter } from './fixed-window-limiter';

describe('FixedWindowLimiter memory bound', () => {
  const T = 1_800_000_000_000; // a multiple of the window
  const address = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

  it('holds at most twice its bound, whatever the number of distinct addresses', () => {
    const limiter = new FixedWindowLimiter(3, 60_000, 1_000);
    for (let i = 0; i < 50_000; i++) limiter.hit(address(i), T + 1);
    expect(limiter.size).toBeLessThanOrEqual(1_000);
    for (let i = 0; i < 50_000; i++) for (let n = 0; n < 4; n++) limiter.hit(`flood-${i}`, T + 2);
    expect(limiter.size).toBeLessThanOrEqual(2_000);
  });

  it('keeps a client over its limit limited until its window ends, however many others come', () => {
    const limiter = new FixedWindowLimiter(3, 60_000, 100);
    for (let n = 0; n < 3; n++) expect(limiter.hit('abuser', T).allowed).toBe(true);
    expect(limiter.hit('abuser', T).allowed).toBe(false);
    for (let i = 0; i < 10_000; i++) limiter.hit(address(i), T + 1_000); // a flood of new addresses
    expect(limiter.hit('abuser', T + 2_000)).toEqual({ allowed: false, retryAfterS: 58 });
    expect(limiter.hit('abuser', T + 60_000).allowed).toBe(true); // the next window
  });

  it('never refuses a new client because others flooded', () => {
    const limiter = new FixedWindowLimiter(3, 60_000, 100);
    for (let i = 0; i < 10_000; i++) for (let n = 0; n < 5; n++) limiter.hit(address(i), T + 1);
    expect(limiter.hit('newcomer', T + 2).allowed).toBe(true);
    expect(limiter.hit('newcomer', T + 3).allowed).toBe(true);
    expect(limiter.hit('newcomer', T + 4).allowed).toBe(true);
    expect(limiter.hit('newcomer', T + 5).allowed).toBe(false); // and is then limited as anyone
  });

  it('below its bound, forgets no one: a client counts across a crowd of others', () => {
    const limiter = new FixedWindowLimiter(2, 60_000, 1_000);
    expect(limiter.hit('steady', T).allowed).toBe(true);
    for (let i = 0; i < 900; i++) limiter.hit(address(i), T + 1);
    expect(limiter.hit('steady', T + 2).allowed).toBe(true);
    expect(limiter.hit('steady', T + 3).allowed).toBe(false);
  });
});
