import {
  Inject,
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { Clock } from '@app/clock';
import { RateLimitedError } from '../errors/pricing-error';
import { PRICING_OPTIONS, type ResolvedPricingOptions } from '../options/pricing-options';
import { clientAddress, clientAddressKey, compileTrustProxy, type TrustedHop } from './client-address';
import { FixedWindowLimiter, type RateVerdict } from './fixed-window-limiter';
import { SharedRateLimiter } from './shared-rate-limiter';

/**
 * Section 7's limit per client address on `/v1/pricing`: a fixed window, counted in memory and
 * synchronously by default (the benchmark shows why: docs/benchmarks.md), shared through Redis
 * when a Redis URL is set.
 */
@Injectable()
export class PriceListRateLimiter implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(PriceListRateLimiter.name);
  private readonly trusted: TrustedHop | undefined;
  private readonly local: FixedWindowLimiter | undefined;
  private readonly shared: SharedRateLimiter | undefined;
  private warnedMalformed = false;
  /**
   * Once per process: an element of X-Forwarded-For that is no address, behind a trusted proxy,
   * means a proxy writes something else (or passes on what clients send); its text is not logged.
   */
  private readonly onMalformed = (): void => {
    if (this.warnedMalformed) return;
    this.warnedMalformed = true;
    this.logger.warn(
      'X-Forwarded-For held an element that is not an IP address (with or without a port) behind a trusted proxy: ' +
        'such a request is limited as the last valid address; check what the proxies named in TRUST_PROXY write',
    );
  };

  constructor(
    @Inject(PRICING_OPTIONS) options: ResolvedPricingOptions,
    private readonly clock: Clock,
  ) {
    this.trusted = compileTrustProxy(options.trustProxy);
    if (options.trustProxy === true) {
      this.logger.warn(
        'TRUST_PROXY=true trusts every hop of X-Forwarded-For: any client can choose the address it is limited as',
      );
    }
    const windowMs = options.rateWindowS * 1000;
    if (options.redisUrl) this.shared = new SharedRateLimiter(options.redisUrl, options.rateLimit, windowMs);
    else this.local = new FixedWindowLimiter(options.rateLimit, windowMs);
  }

  hit(req: IncomingMessage): RateVerdict | Promise<RateVerdict> {
    const forwardedFor = this.trusted && (req.headers['x-forwarded-for'] as string | undefined);
    const key = clientAddressKey(clientAddress(req.socket.remoteAddress, forwardedFor, this.trusted, this.onMalformed));
    const nowMs = this.clock.nowMs();
    return this.local ? this.local.hit(key, nowMs) : this.shared!.hit(key, nowMs);
  }

  async onModuleInit(): Promise<void> {
    await this.shared?.connect();
  }

  async onModuleDestroy(): Promise<void> {
    await this.shared?.close();
  }
}

/** Counts every request of the endpoint, whatever its method; refuses with RateLimitedError. */
@Injectable()
export class PriceListRateLimitGuard implements CanActivate {
  constructor(private readonly limiter: PriceListRateLimiter) {}

  canActivate(context: ExecutionContext): true | Promise<true> {
    // The request is the first argument; switchToHttp() would allocate three closures a call.
    const verdict = this.limiter.hit(context.getArgByIndex<IncomingMessage>(0));
    return verdict instanceof Promise ? verdict.then(allowedOrThrow) : allowedOrThrow(verdict);
  }
}

function allowedOrThrow(verdict: RateVerdict): true {
  if (!verdict.allowed) throw new RateLimitedError(verdict.retryAfterS);
  return true;
}
