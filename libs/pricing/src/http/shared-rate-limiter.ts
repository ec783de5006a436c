import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { withDeadline } from './deadline';
import { FixedWindowLimiter, type RateVerdict } from './fixed-window-limiter';

/** How long a request may wait for Redis before it is counted in memory instead. */
export const REDIS_TIMEOUT_MS = 100;
/** While Redis is out, how often it is asked whether it is back. */
const PROBE_MS = 1_000;
const KEY_PREFIX = 'pricing:rate:';

/** Counts a hit in the window's key, which expires with the window: INCR, then PEXPIRE on the first. */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

type CountingRedis = Redis & { pricingHit(key: string, ttlMs: number): Promise<number> };

/**
 * The fixed-window limit shared by every instance through Redis (one key per client per window,
 * windows aligned as in FixedWindowLimiter). Redis never delays or fails a request by more than
 * REDIS_TIMEOUT_MS: when it errs or does not answer in time, this instance counts in memory
 * until a probe finds Redis back; each outage is logged once, and its end once.
 */
export class SharedRateLimiter {
  private readonly logger = new Logger('PricingRateLimit');
  private readonly redis: CountingRedis;
  private readonly local: FixedWindowLimiter;
  private out = false;
  private probe: NodeJS.Timeout | undefined;

  constructor(
    redisUrl: string,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {
    this.local = new FixedWindowLimiter(limit, windowMs);
    this.redis = new Redis(redisUrl, {
      lazyConnect: true, // connect() below, awaited at start-up
      commandTimeout: REDIS_TIMEOUT_MS,
      connectTimeout: 1_000,
      // Fail at once while disconnected rather than queue: the local count answers meanwhile.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    }) as CountingRedis;
    this.redis.defineCommand('pricingHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    // ioredis reports every failed reconnect as an 'error' event: the outage is logged once instead.
    this.redis.on('error', (error: Error) => this.markOut(error));
  }

  /**
   * Connects, for at most a second: the app starts with the shared count ready rather than
   * calling Redis unavailable for its first requests. A Redis that is not there by then is an
   * outage like any other (logged once; the local count answers until a probe finds it).
   */
  async connect(): Promise<void> {
    try {
      await withDeadline(this.redis.connect(), 1_000, () => new Error('no connection within 1 s'));
    } catch (error) {
      this.markOut(error as Error);
    }
  }

  async hit(key: string, nowMs: number): Promise<RateVerdict> {
    if (this.out) return this.local.hit(key, nowMs);
    const windowStart = nowMs - (nowMs % this.windowMs);
    try {
      const count = await this.redis.pricingHit(`${KEY_PREFIX}${windowStart}:${key}`, this.windowMs);
      return count <= this.limit
        ? { allowed: true }
        : { allowed: false, retryAfterS: (windowStart + this.windowMs - nowMs) / 1000 };
    } catch (error) {
      this.markOut(error as Error);
      return this.local.hit(key, nowMs);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.probe);
    this.out = false;
    this.redis.disconnect();
    await Promise.resolve();
  }

  private markOut(error: Error): void {
    if (this.out || this.redis.status === 'end') return;
    this.out = true;
    this.logger.warn(`Redis is unavailable (${error.message}): counting the rate limit in memory until it answers`);
    this.probe = setInterval(() => void this.checkBack(), PROBE_MS);
    this.probe.unref();
  }

  private async checkBack(): Promise<void> {
    try {
      await this.redis.ping();
    } catch {
      // A connection that a partition cut silently never errs by itself: open a new one.
      if (this.redis.status === 'ready') this.redis.disconnect(true);
      return;
    }
    if (!this.out) return;
    clearInterval(this.probe);
    this.out = false;
    this.logger.log('Redis answers again: the rate limit is shared again');
  }
}
