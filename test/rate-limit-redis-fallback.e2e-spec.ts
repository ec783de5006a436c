import { freePort } from '@app/control-plane';
import { listPrice } from '@app/pricing/testing';
import { createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { useTestDatabase } from './support/database';
import { send } from './support/http';
import { RecordingLogger } from './support/recording-logger';
import { startTestApp, type TestApp } from './support/test-app';

// With REDIS_URL, a Redis that does not answer, or is not there, never delays or fails a request
// of GET /v1/pricing: the instance counts in memory instead, and says so once (docs/decisions.md,
// "Rate limit"). The faults are built here: a TCP server that accepts and never answers, and
// a port where nothing listens. `npm run test:redis` runs the same rules against a real Redis.

/** A "Redis" that accepts connections and never answers a byte. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('GET /v1/pricing with a Redis that fails', () => {
  const db = useTestDatabase({
    book: { prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2025-01-01T00:00:00Z')] },
  });
  const apps: TestApp[] = [];

  // Nest's logger is one per process: an app left running would log into the next test's lines.
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  async function exercise(redisUrl: string): Promise<{ statuses: number[]; slowestMs: number; warnings: string[] }> {
    const logger = new RecordingLogger();
    const app = await startTestApp({
      databaseUrl: db.url,
      listen: true,
      logger,
      // A day: a fixed window that turned during the 60 requests would start the count again.
      env: { REDIS_URL: redisUrl, PRICING_RATE_LIMIT: '50', PRICING_RATE_WINDOW_S: '86400' },
    });
    apps.push(app);
    const statuses: number[] = [];
    let slowestMs = 0;
    for (let i = 0; i < 60; i++) {
      const started = performance.now();
      statuses.push((await send(app)).status);
      slowestMs = Math.max(slowestMs, performance.now() - started);
    }
    return { statuses, slowestMs, warnings: logger.of('warn', 'PricingRateLimit') };
  }

  it.each([
    ['hangs (accepts, never answers)', silentServer],
    [
      'is gone (nothing listens)',
      async () => ({ url: `redis://127.0.0.1:${await freePort()}`, close: () => Promise.resolve() }),
    ],
  ])('Redis %s: every request answered at once, the limit counted in memory, one log line', async (_what, make) => {
    const redis = await make();
    try {
      const { statuses, slowestMs, warnings } = await exercise(redis.url);
      // The limit of 50 still holds: counted in memory.
      expect(statuses.filter((s) => s === 200)).toHaveLength(50);
      expect(statuses.slice(50)).toEqual(Array(10).fill(429));
      // No request waits for Redis longer than its 100 ms timeout (plus the request itself).
      expect(slowestMs).toBeLessThan(1_000);
      // One line for the outage, not one per request.
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/Redis is unavailable .*counting the rate limit in memory/);
    } finally {
      await redis.close();
    }
  });
});
