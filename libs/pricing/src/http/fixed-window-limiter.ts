export type RateVerdict = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterS: number };

const ALLOWED: RateVerdict = { allowed: true };

/**
 * Counts requests per key in fixed windows aligned to multiples of `windowMs`, in memory and
 * synchronously: O(1) per request, one map entry per client per window, all dropped when the
 * window turns. The instant is passed in.
 */
export class FixedWindowLimiter {
  private counts = new Map<string, number>();
  private windowEndMs = -Infinity;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  hit(key: string, nowMs: number): RateVerdict {
    if (nowMs >= this.windowEndMs || nowMs < this.windowEndMs - this.windowMs) {
      this.counts = new Map();
      this.windowEndMs = nowMs - (nowMs % this.windowMs) + this.windowMs;
    }
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count <= this.limit ? ALLOWED : { allowed: false, retryAfterS: (this.windowEndMs - nowMs) / 1000 };
  }
}
