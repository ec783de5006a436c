import { Inject, Injectable, type NestMiddleware, type OnModuleDestroy } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { rateLimit, type RateLimitRequestHandler, type Store } from 'express-rate-limit';
import { Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { PRICING_OPTIONS, type PricingModuleOptions } from '../pricing.options';
import { PriceBookCache } from '../snapshot/price-book-cache';
import { answerPriceListRequest, tooManyRequests, type PlainResponse } from './answer-price-list-request';
import { clientAddressKey } from './client-address';

/**
 * `GET /v1/pricing`, served as Express middleware ahead of Nest's router: it is public (no
 * guard runs), every request counts towards the per-address limit, and the answer is written
 * from bytes rendered once per change.
 */
@Injectable()
export class PriceListMiddleware implements NestMiddleware, OnModuleDestroy {
  private readonly redis: Redis | undefined;
  private readonly limiter: RateLimitRequestHandler;

  constructor(
    @Inject(PRICING_OPTIONS) options: PricingModuleOptions,
    private readonly cache: PriceBookCache,
  ) {
    this.redis = options.redisUrl
      ? new Redis(options.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1 })
      : undefined;
    const redis = this.redis;
    const store: Store | undefined = redis
      ? new RedisStore({
          prefix: 'pricing:rate-limit:',
          sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
        })
      : undefined;
    this.limiter = rateLimit({
      windowMs: options.rateWindowS * 1000,
      limit: options.rateLimit,
      standardHeaders: false,
      legacyHeaders: false,
      // The client address is req.ip: the socket's, or X-Forwarded-For under TRUST_PROXY.
      keyGenerator: (req) => clientAddressKey(req.ip),
      handler: (req, res) => {
        const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
        const retryAfterS = resetTime ? (resetTime.getTime() - Date.now()) / 1000 : options.rateWindowS;
        write(res, tooManyRequests(retryAfterS));
      },
      // A Redis outage must not take the public price list down with it.
      passOnStoreError: true,
      validate: false,
      ...(store && { store }),
    });
  }

  use(req: Request, res: Response, next: NextFunction): void {
    void this.limiter(req, res, (error?: unknown) => {
      if (error) return next(error);
      write(res, answerPriceListRequest(req.method, req.headers['if-none-match'], this.cache.current()?.priceList));
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.redis?.quit().catch(() => undefined);
  }
}

function write(res: Response, answer: PlainResponse): void {
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}
