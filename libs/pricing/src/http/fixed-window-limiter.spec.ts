import { FixedWindowLimiter } from './fixed-window-limiter';

describe('FixedWindowLimiter', () => {
  it('allows `limit` requests per key per window, then tells how long to wait', () => {
    const limiter = new FixedWindowLimiter(2, 60_000);
    const t = 1_800_000_000_000; // a multiple of the window: it starts here
    expect(limiter.hit('a', t)).toEqual({ allowed: true });
    expect(limiter.hit('a', t + 1_000)).toEqual({ allowed: true });
    expect(limiter.hit('a', t + 15_000)).toEqual({ allowed: false, retryAfterS: 45 });
    expect(limiter.hit('b', t + 15_000)).toEqual({ allowed: true });
  });

  it('starts counting again when the window turns', () => {
    const limiter = new FixedWindowLimiter(1, 60_000);
    const t = 1_800_000_000_000;
    expect(limiter.hit('a', t + 59_999).allowed).toBe(true);
    expect(limiter.hit('a', t + 59_999).allowed).toBe(false);
    expect(limiter.hit('a', t + 60_000).allowed).toBe(true);
  });

  it('starts over when the clock goes back', () => {
    const limiter = new FixedWindowLimiter(1, 60_000);
    const t = 1_800_000_000_000;
    expect(limiter.hit('a', t).allowed).toBe(true);
    expect(limiter.hit('a', t - 120_000).allowed).toBe(true);
  });

  describe('at its bound', () => {
    const t = 1_800_000_000_000;
    const allowed = (limiter: FixedWindowLimiter, key: string, at = t): boolean => limiter.hit(key, at).allowed;

    it('forgets the longest-tracked client under its limit to count a new one', () => {
      const limiter = new FixedWindowLimiter(2, 60_000, 3);
      const hits = (key: string, n: number): boolean[] => Array.from({ length: n }, () => allowed(limiter, key));
      for (const key of ['a', 'b', 'c', 'd', 'e']) allowed(limiter, key); // a, then b, forgotten
      expect(limiter.size).toBe(3);
      expect(hits('c', 2)).toEqual([true, false]); // c was kept: its count went on (and it is now limited)
      expect(hits('a', 3)).toEqual([true, true, false]); // a was forgotten: counted afresh
      expect(hits('b', 3)).toEqual([true, true, false]); // so was b
      // Counting now d, e; f fills the bound, g makes room by forgetting d, the oldest left.
      for (const key of ['f', 'g']) allowed(limiter, key);
      expect(hits('e', 2)).toEqual([true, false]);
      expect(hits('d', 2)).toEqual([true, true]);
    });

    it('never forgets a client over its limit, whatever the number of new clients', () => {
      const limiter = new FixedWindowLimiter(1, 60_000, 2);
      allowed(limiter, 'flooder');
      expect(allowed(limiter, 'flooder')).toBe(false);
      for (let i = 0; i < 1_000; i++) expect(allowed(limiter, `client-${i}`)).toBe(true);
      expect(allowed(limiter, 'flooder')).toBe(false);
      expect(limiter.size).toBe(3); // two counting, one limited
    });

    it('stays bounded in every window, evicting in order after the window turns', () => {
      const limiter = new FixedWindowLimiter(5, 60_000, 3);
      for (let i = 0; i < 10; i++) allowed(limiter, `first-${i}`);
      for (let i = 0; i < 10; i++) allowed(limiter, `second-${i}`, t + 60_000);
      expect(limiter.size).toBe(3);
      // The three kept are the last three: their next requests count on from 1.
      for (const key of ['second-7', 'second-8', 'second-9']) {
        for (let n = 2; n <= 5; n++) expect(allowed(limiter, key, t + 60_000)).toBe(true);
        expect(allowed(limiter, key, t + 60_000)).toBe(false);
      }
    });
  });
});
