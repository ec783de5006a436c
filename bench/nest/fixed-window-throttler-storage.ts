import type { ThrottlerStorage } from '@nestjs/throttler';
import { FixedWindowLimiter } from '../../libs/pricing/src/http/fixed-window-limiter';

/**
 * @nestjs/throttler's storage interface over the pricing library's FixedWindowLimiter: O(1) per
 * request and bounded memory, where the default ThrottlerStorageService keeps one timestamp per
 * hit and filters that array on every request. Windows are aligned to multiples of `ttl`, as
 * in the library; a client over its limit stays refused until its window ends (`blockDuration`
 * is not used).
 *
 * FixedWindowLimiter does not report counts. ThrottlerGuard reads `totalHits` only for its
 * X-RateLimit-* headers (off: section 8 does not show the numbers) and the exception's details,
 * so the record says 0 while allowed and `limit + 1` once refused.
 */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

export class FixedWindowThrottlerStorage implements ThrottlerStorage {
  /** One limiter per throttler and its settings (a route may override limit and ttl). */
  private readonly limiters = new Map<string, FixedWindowLimiter>();

  increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const nowMs = Date.now();
    const verdict = this.limiterFor(throttlerName, limit, ttl).hit(key, nowMs);
    const record: ThrottlerStorageRecord = verdict.allowed
      ? { totalHits: 0, timeToExpire: Math.ceil((ttl - (nowMs % ttl)) / 1000), isBlocked: false, timeToBlockExpire: 0 }
      : {
          totalHits: limit + 1,
          timeToExpire: Math.ceil(verdict.retryAfterS),
          isBlocked: true,
          timeToBlockExpire: Math.ceil(verdict.retryAfterS),
        };
    return Promise.resolve(record);
  }

  private limiterFor(name: string, limit: number, ttl: number): FixedWindowLimiter {
    const id = `${name}\u0000${limit}\u0000${ttl}`;
    let limiter = this.limiters.get(id);
    if (!limiter) this.limiters.set(id, (limiter = new FixedWindowLimiter(limit, ttl)));
    return limiter;
  }
}
