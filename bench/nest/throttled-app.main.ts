// The control plane as main.ts starts it, except that PricingController's rate limit is
// @nestjs/throttler's ThrottlerGuard over an O(1) fixed-window ThrottlerStorage instead of
// PriceListRateLimitGuard: the benchmark's second variant (docs/benchmarks.md). Only for the
// benchmark: `node dist/bench/nest/throttled-app.main.js` with the app's environment
// (DATABASE_URL required, PORT, HOST, PRICING_RATE_LIMIT, PRICING_RATE_WINDOW_S, TRUST_PROXY).
import 'reflect-metadata';
import { type ExecutionContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ThrottlerGuard, ThrottlerModule, type ThrottlerLimitDetail } from '@nestjs/throttler';
import { AppModule, configureExpress, loadConfig } from '@app/control-plane';
import type { IncomingMessage, Server } from 'node:http';
import { RateLimitedError } from '../../libs/pricing/src/errors/pricing-error';
import { clientAddress, clientAddressKey, compileTrustProxy } from '../../libs/pricing/src/http/client-address';
import { PriceListRateLimitGuard } from '../../libs/pricing/src/http/price-list-rate-limit';
import { FixedWindowThrottlerStorage } from './fixed-window-throttler-storage';

/** ThrottlerGuard whose refusal is section 7's 429 (PriceListExceptionFilter writes it). */
class PriceListThrottlerGuard extends ThrottlerGuard {
  protected override throwThrottlingException(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    return Promise.reject(new RateLimitedError(detail.timeToBlockExpire));
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  if (config.databaseUrl === undefined) throw new Error('DATABASE_URL is required');
  const trusted = compileTrustProxy(config.trustProxy);
  const trackerOf = (req: IncomingMessage): string =>
    clientAddressKey(
      clientAddress(req.socket.remoteAddress, trusted && (req.headers['x-forwarded-for'] as string), trusted),
    );
  const throttler = ThrottlerModule.forRoot({
    throttlers: [{ limit: config.pricingRateLimit, ttl: config.pricingRateWindowS * 1000 }],
    storage: new FixedWindowThrottlerStorage(),
    // The same key as PriceListRateLimiter's: the client address under TRUST_PROXY, IPv6 per /64.
    getTracker: (req) => trackerOf(req as IncomingMessage),
    // Section 7 counts every request to /v1/pricing, whatever its method: one key per client,
    // not ThrottlerGuard's default of one per handler (a SHA-256 of class, handler and client).
    generateKey: (_context, tracker) => tracker,
    // Section 8: the numeric limit and window are not shown.
    setHeaders: false,
  });
  // @nestjs/testing's overrideGuard is Nest's own way to swap the guard a controller names.
  const moduleRef = await Test.createTestingModule({
    imports: [throttler, AppModule.forRoot(config, config.databaseUrl)],
  })
    .overrideGuard(PriceListRateLimitGuard)
    .useClass(PriceListThrottlerGuard)
    .compile();
  const app = moduleRef.createNestApplication({ bodyParser: false });
  configureExpress(app, config);
  await app.init();
  await app.listen(config.port, config.host);
  const stop = async (): Promise<void> => {
    const server = app.getHttpServer() as Server;
    await new Promise((resolve) => server.close(resolve));
    await app.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
