import { listPrice } from '@app/pricing/testing';
import { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { useTestDatabase } from '../support/database';
import { send, waitFor } from '../support/http';
import { RecordingLogger } from '../support/recording-logger';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, type TestApp } from '../support/test-app';
import { startTestRedis, type TestRedis } from './redis-server';

// The rate limit shared through a real Redis (`npm run test:redis`): instances count together;
// when Redis hangs or goes away, each instance counts in memory without delaying a request, logs
// the outage once, and shares again once Redis answers. Each test is its own client address
// (TRUST_PROXY=loopback, X-Forwarded-For), so tests never share a counter, on a shared Redis too.

const LIMIT = 6;

/** Waits until the rate limit logs that Redis answers again (one line at the `log` level). */
function redisAnswersAgain(logger: RecordingLogger, timeoutMs: number): Promise<unknown> {
  return waitFor(
    'Redis to answer again',
    () => Promise.resolve(logger.of('log', 'PricingRateLimit')),
    (l) => l.length > 0,
    timeoutMs,
    50,
  );
}

describe('the shared rate limit, on a real Redis', () => {
  let redis: TestRedis;
  const db = useTestDatabase({
    book: { prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2025-01-01T00:00:00Z')] },
  });
  const apps: TestApp[] = [];
  let nextClient = 1;

  beforeAll(async () => {
    redis = await startTestRedis();
  });

  // Nest's logger is one per process: an app left running would log into the next test's lines.
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  afterAll(async () => {
    if (redis) {
      const admin = new Redis(redis.url);
      const keys = await admin.keys('pricing:rate:*:198.51.100.*');
      if (keys.length > 0) await admin.del(...keys);
      admin.disconnect();
    }
    await redis?.stop();
  });

  async function instance(redisUrl: string, logger = new RecordingLogger()): Promise<TestApp> {
    const app = await startTestApp({
      databaseUrl: db.url,
      listen: true,
      logger,
      env: {
        REDIS_URL: redisUrl,
        PRICING_RATE_LIMIT: String(LIMIT),
        // A day: fixed windows are aligned to the clock, and one that turned during a test would
        // start every count again. Keys of the suite's addresses are removed at the end.
        PRICING_RATE_WINDOW_S: '86400',
        TRUST_PROXY: 'loopback',
      },
    });
    apps.push(app);
    return app;
  }

  /** A client address of its own for each test. */
  function client(): (app: TestApp) => Promise<number> {
    const address = `198.51.100.${nextClient++}`;
    return async (app) => (await send(app, 'GET', { 'x-forwarded-for': address })).status;
  }

  it('two instances count one client together', async () => {
    const [a, b] = [await instance(redis.url), await instance(redis.url)];
    const from = client();
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push(await from(i % 2 === 0 ? a : b));
    expect(statuses).toEqual(Array(LIMIT).fill(200));
    expect(await from(a)).toBe(429);
    expect(await from(b)).toBe(429);
  });

  it('Redis paused (every command hangs): answers at once, counted in memory, one line; shared again after', async () => {
    const logger = new RecordingLogger();
    const app = await instance(redis.url, logger);
    const from = client();
    expect(await from(app)).toBe(200); // counted in Redis
    const admin = new Redis(redis.url);
    try {
      await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
      const started = performance.now();
      const during: number[] = [];
      for (let i = 0; i < 10; i++) during.push(await from(app));
      // One request waited the 100 ms timeout; every other one went to the local count at once.
      expect(performance.now() - started).toBeLessThan(1_000);
      // In memory this client starts at 0: LIMIT more, then refused.
      expect(during).toEqual([...Array(LIMIT).fill(200), ...Array(10 - LIMIT).fill(429)]);
      expect(logger.of('warn', 'PricingRateLimit')).toHaveLength(1);
      await redisAnswersAgain(logger, 5_000);
      // Shared again. Redis holds this client's request of before the pause, and maybe the one that
      // timed out: a paused Redis runs it when the pause ends, unless its connection was replaced first.
      const after: number[] = [];
      for (let i = 0; i < LIMIT; i++) after.push(await from(app));
      const allowed = after.filter((status) => status === 200).length;
      expect([LIMIT - 2, LIMIT - 1]).toContain(allowed);
      expect(after).toEqual([...Array(allowed).fill(200), ...Array(LIMIT - allowed).fill(429)]);
    } finally {
      admin.disconnect();
    }
  });

  it.each([
    ['gone (connections reset, new ones refused)', (proxy: TcpProxy) => proxy.drop()],
    ['cut off silently (a partition: nothing answers, nothing closes)', (proxy: TcpProxy) => proxy.partition()],
  ])('Redis %s, then back: answers at once meanwhile, one line each way, shared again', async (_what, fault) => {
    const proxy = await TcpProxy.start({ host: redis.host, port: redis.port });
    try {
      const logger = new RecordingLogger();
      const app = await instance(`redis://127.0.0.1:${proxy.port}`, logger);
      const from = client();
      expect(await from(app)).toBe(200);
      fault(proxy);
      const started = performance.now();
      const during: number[] = [];
      for (let i = 0; i < 20; i++) during.push(await from(app));
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(during.filter((s) => s === 200)).toHaveLength(LIMIT);
      expect(logger.of('warn', 'PricingRateLimit')).toHaveLength(1);
      proxy.heal();
      await redisAnswersAgain(logger, 10_000);
      expect(logger.of('warn', 'PricingRateLimit')).toHaveLength(1);
      const after: number[] = [];
      for (let i = 0; i < LIMIT; i++) after.push(await from(app));
      expect(after).toEqual([...Array(LIMIT - 1).fill(200), 429]);
    } finally {
      await proxy.close();
    }
  });
});
