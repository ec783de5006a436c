import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PricingState } from '../snapshot/pricing-state';
import { answerPriceListRequest, tooManyRequests } from './answer-price-list-request';
import { PriceListAnswerCounts } from './price-list-answer-counts';
import { PriceListRateLimiter } from './price-list-rate-limit';
import type { RateVerdict } from './fixed-window-limiter';

/**
 * Answers GET and HEAD of `/v1/pricing` ahead of Nest's route handler (PricingModule applies it
 * to the route): the same per-address limit and the same precomputed answers as PricingController,
 * without Nest's guard and handler steps, which cost a request more than the answer itself (about
 * six promises: docs/benchmarks.md, "What is left on the public route's path"). The route is
 * public, so no other guard has anything to decide.
 *
 * A host that can mount an Express route before Nest's (the control plane's configure-express.ts)
 * mounts `use` itself, ahead of everything else: Nest's wrapper around a middleware (a WeakSet of
 * the requests it ran for, an async proxy) and the layers before it cost as much again.
 */
@Injectable()
export class PriceListMiddleware implements NestMiddleware {
  constructor(
    private readonly limiter: PriceListRateLimiter,
    private readonly prices: PricingState,
    private readonly answers: PriceListAnswerCounts,
  ) {}

  use(req: IncomingMessage, res: ServerResponse): void {
    const verdict = this.limiter.hit(req);
    // The shared limit answers within its timeout and never rejects (shared-rate-limiter.ts).
    if (verdict instanceof Promise) void verdict.then((counted) => this.answer(req, res, counted));
    else this.answer(req, res, verdict);
  }

  private answer(req: IncomingMessage, res: ServerResponse, verdict: RateVerdict): void {
    this.answers.send(
      res,
      verdict.allowed
        ? answerPriceListRequest(req.method!, req.headers, this.prices.current()?.priceList)
        : tooManyRequests(verdict.retryAfterS),
    );
  }
}
