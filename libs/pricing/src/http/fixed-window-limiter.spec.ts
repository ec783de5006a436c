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
});
