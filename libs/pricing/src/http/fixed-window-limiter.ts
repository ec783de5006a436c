export type RateVerdict = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterS: number };

const ALLOWED: RateVerdict = { allowed: true };

/** Default bound on the clients tracked in one window (its memory: docs/benchmarks.md). */
export const DEFAULT_MAX_TRACKED_CLIENTS = 100_000;

/**
 * Counts requests per key in fixed windows aligned to multiples of `windowMs`, in memory and
 * synchronously: O(1) per request; everything is dropped when the window turns. The instant is
 * passed in.
 *
 * Memory is bounded: at most `maxTracked` clients under their limit and `maxTracked` clients
 * over it are held per window, whatever the number of distinct addresses. At the bound:
 * - a new client is always counted: to make room, the longest-tracked client still under its
 *   limit is forgotten (it may send up to `limit` more requests in that window), so nobody is
 *   refused because others flooded;
 * - a client over its limit is never forgotten, so it stays limited until its window ends.
 *   Only once `maxTracked` clients are over their limit in one window (`maxTracked × limit`
 *   requests) is a further one counted afresh instead.
 */
export class FixedWindowLimiter {
  /** Clients under their limit, oldest first (a Map keeps insertion order). */
  private counting = new Map<string, number>();
  /** Clients over their limit in this window. */
  private limited = new Set<string>();
  /**
   * Walks `counting` in insertion order, kept from one eviction to the next: O(1) amortized. A
   * fresh `keys()` at every eviction would step over every entry deleted before the oldest live
   * one, about `maxTracked / 2` on average at the bound.
   */
  private oldestCounting: MapIterator<string> | undefined;
  private windowEndMs = -Infinity;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxTracked = DEFAULT_MAX_TRACKED_CLIENTS,
  ) {}

  /** Clients held now (both kinds), for tests and the benchmark. */
  get size(): number {
    return this.counting.size + this.limited.size;
  }

  hit(key: string, nowMs: number): RateVerdict {
    if (nowMs >= this.windowEndMs || nowMs < this.windowEndMs - this.windowMs) {
      this.counting = new Map();
      this.limited = new Set();
      this.oldestCounting = undefined;
      this.windowEndMs = nowMs - (nowMs % this.windowMs) + this.windowMs;
    }
    if (this.limited.has(key)) return this.refuse(nowMs);
    const count = (this.counting.get(key) ?? 0) + 1;
    if (count <= this.limit) {
      if (count === 1 && this.counting.size >= this.maxTracked) this.forgetOldestCounting();
      this.counting.set(key, count);
      return ALLOWED;
    }
    this.counting.delete(key);
    if (this.limited.size < this.maxTracked) this.limited.add(key);
    return this.refuse(nowMs);
  }

  private forgetOldestCounting(): void {
    // Every key before the walk's position was forgotten here, so the next one is the oldest
    // live (a key counted again later was inserted anew, at the end).
    let oldest = this.oldestCounting?.next();
    if (!oldest || oldest.done) {
      this.oldestCounting = this.counting.keys();
      oldest = this.oldestCounting.next();
    }
    if (!oldest.done) this.counting.delete(oldest.value);
  }

  private refuse(nowMs: number): RateVerdict {
    return { allowed: false, retryAfterS: (this.windowEndMs - nowMs) / 1000 };
  }
}
