import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import {
  rateLimit,
  type ClientRateLimitInfo,
  type Options as RateLimitOptions,
  type RateLimitRequestHandler,
} from 'express-rate-limit';
import { Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { PRICING_OPTIONS, type PricingModuleOptions } from '../pricing.options';
import { PriceBookCache } from '../snapshot/price-book-cache';
import { answerPriceListRequest, tooManyRequests } from './answer-price-list-request';
import { clientAddressKey } from './client-address';
import { FixedWindowLimiter } from './fixed-window-limiter';
import type { PlainResponse } from './price-list-response';

/**
 * Answers `/v1/pricing`: every request counts towards the per-address limit, then the answer
 * is written from bytes rendered once per change. `servePriceList(app)` mounts it.
 *
 * The limit is a fixed window per client address: in memory, synchronously, by default (the
 * benchmark showed express-rate-limit's promise chain costing a fifth of the throughput);
 * shared between instances through Redis, with express-rate-limit and rate-limit-redis, when
 * REDIS_URL is set.
 */
@Injectable()
export class PriceListHandler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly redis: Redis | undefined;
  private readonly sharedLimiter: RateLimitRequestHandler | undefined;
  private readonly localLimiter: FixedWindowLimiter;
  /** Set by servePriceList; an app that forgot to mount the endpoint fails to start. */
  mounted = false;
  /** Express's trust proxy setting when mounted: without it, req.ip is the socket's address. */
  trustsProxy = false;

  constructor(
    @Inject(PRICING_OPTIONS) options: PricingModuleOptions,
    private readonly cache: PriceBookCache,
  ) {
    this.localLimiter = new FixedWindowLimiter(options.rateLimit, options.rateWindowS * 1000);
    if (options.redisUrl) {
      // No offline queue: while Redis is down, requests fail over at once instead of waiting.
      const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
      this.redis = redis;
      this.sharedLimiter = rateLimit({
        windowMs: options.rateWindowS * 1000,
        limit: options.rateLimit,
        standardHeaders: false,
        legacyHeaders: false,
        keyGenerator: (req) => clientAddressKey(this.clientAddress(req)),
        handler: (req, res) => {
          const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
          write(res, tooManyRequests(resetTime ? (resetTime.getTime() - Date.now()) / 1000 : options.rateWindowS));
        },
        // A Redis outage must not take the public price list down with it.
        passOnStoreError: true,
        validate: false,
        store: new ReconnectingRedisStore({
          prefix: 'pricing:rate-limit:',
          sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
        }),
      });
    }
  }

  handle(req: Request, res: Response, next: NextFunction): void {
    if (this.sharedLimiter) {
      void this.sharedLimiter(req, res, (error?: unknown) => (error ? next(error) : this.answer(req, res)));
      return;
    }
    const verdict = this.localLimiter.hit(clientAddressKey(this.clientAddress(req)), Date.now());
    if (verdict.allowed) this.answer(req, res);
    else write(res, tooManyRequests(verdict.retryAfterS));
  }

  onApplicationBootstrap(): void {
    if (!this.mounted) throw new Error('GET /v1/pricing is not served: call servePriceList(app) before app.init()');
  }

  async onModuleDestroy(): Promise<void> {
    await this.redis?.quit().catch(() => undefined);
  }

  /** req.ip (X-Forwarded-For under TRUST_PROXY), read straight from the socket when no proxy is trusted. */
  private clientAddress(req: Request): string | undefined {
    return this.trustsProxy ? req.ip : req.socket.remoteAddress;
  }

  private answer(req: Request, res: Response): void {
    write(res, answerPriceListRequest(req.method, req.headers['if-none-match'], this.cache.current()?.priceList));
  }
}

/**
 * rate-limit-redis loads its script once, at start-up, and reloads it only on NOSCRIPT: when
 * Redis was unreachable then, every later increment fails and the limit stays off for good.
 * After any failure, the next increment loads the script again, so the shared limit comes
 * back with Redis.
 */
export class ReconnectingRedisStore extends RedisStore {
  private scriptLost = false;

  override async init(options: RateLimitOptions): Promise<void> {
    try {
      await super.init(options);
    } catch (error) {
      this.scriptLost = true;
      throw error;
    }
  }

  override async increment(key: string): Promise<ClientRateLimitInfo> {
    if (this.scriptLost) {
      this.scriptLost = false;
      this.incrementScriptSha = this.loadIncrementScript();
    }
    try {
      return await super.increment(key);
    } catch (error) {
      this.scriptLost = true;
      throw error;
    }
  }
}

function write(res: Response, answer: PlainResponse): void {
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}
