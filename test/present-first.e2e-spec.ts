import { PricingService } from '@app/pricing';
import { listPrice } from '@app/pricing/testing';
import { applyBook, useTestDatabase } from './support/database';
import { send } from './support/http';
import { RecordingLogger } from './support/recording-logger';
import type { TestApp } from './support/test-app';

// An instance started on a past of three writes of list prices or more reads the list's present
// first and serves it, then the rest of the past (docs/decisions.md, "One clock", "The present
// first"). What it serves once started must be what an instance that saw every write live serves:
// the list now, the list at every instant, the feed, byte for byte.

const RATE = { PRICING_RATE_LIMIT: '1000000' };

/** A list price of a GiB-month from the instant of its write. */
const fromNow = (productKey: string, amount: string) => ({
  product_key: productKey,
  unit_type: 'gib_hours',
  unit_count: 730,
  amount,
});

describe('an instance started on a long past', () => {
  const test = useTestDatabase({
    book: {
      prices: [
        listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z'),
        listPrice('storage.snapshot', 'gib_hours', 730, '0.0500', '2026-01-01T00:00:00Z'),
      ],
    },
  });
  let live: TestApp;
  let started: TestApp;
  let logger: RecordingLogger;
  /** Instants around each write: before the first, between each two, and after the last. */
  const instants: string[] = [];

  const body = async (app: TestApp, path: string) => {
    const answer = await send(app, 'GET', {}, path);
    expect(answer.status).toBe(200);
    return answer.body.toString('utf8');
  };

  beforeAll(async () => {
    live = await test.start({ databaseUrl: test.url, env: RATE });
    instants.push('2025-06-01T00:00:00Z', new Date(Date.now() - 1).toISOString());
    // Eight writes re-pricing both: the prices ended before the third latest are most of the list.
    for (let i = 0; i < 8; i++) {
      await applyBook(test.dataSource, {
        prices: [fromNow('storage.gp1', `0.04${i}`), fromNow('storage.snapshot', `0.06${i}`)],
      });
      instants.push(new Date(Date.now() - 1).toISOString());
    }
    logger = new RecordingLogger();
    started = await test.start({ databaseUrl: test.url, env: { ...RATE, LOG_LEVEL: 'debug' }, logger });
  }, 60_000);

  it('read the present first: the prices whose listing reaches the cut, then the rest with organizations', async () => {
    const loads = logger.of('debug', 'PriceBookLoader').filter((line) => / loaded \(/.test(line));
    const [count] = await test.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM price_record WHERE organization_id IS NULL`,
    );
    expect(count.n).toBe(18);
    // The five first prices of each (ended by the sixth write, before the third latest) are left for the second read.
    expect(loads[0]).toMatch(/^prices \d+ loaded \(8 list prices alone, organizations' next\)/);
    expect(loads[1]).toMatch(/^prices \d+ loaded \(18 records\)/);
  });

  it('serves what an instance that saw every write serves: the list, the list at every instant, the feed', async () => {
    // Both confirm the book now: each serves the feed up to the last write.
    await Promise.all([live, started].map((app) => app.app.get(PricingService).refresh()));
    expect(await body(started, '/v1/pricing')).toBe(await body(live, '/v1/pricing'));
    for (const instant of instants) {
      expect(await body(started, `/v1/pricing/at/${instant}`)).toBe(await body(live, `/v1/pricing/at/${instant}`));
    }
    expect(await body(started, '/v1/pricing/changes')).toBe(await body(live, '/v1/pricing/changes'));
    expect(JSON.parse(await body(started, '/v1/pricing/changes'))).toMatchObject({ has_more: false });
  });
});

describe('an instance started on a short past', () => {
  const test = useTestDatabase({
    book: { prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z')] },
  });

  it('reads the list prices whole at once: a past of a few ended prices does not repay a second build', async () => {
    // Four more writes: two re-price storage.gp1 (its first price ends before the cut), two add products.
    await applyBook(test.dataSource, { prices: [fromNow('storage.gp1', '0.0490')] });
    await applyBook(test.dataSource, { prices: [fromNow('storage.gp1', '0.0500')] });
    await applyBook(test.dataSource, { prices: [fromNow('storage.snapshot', '0.0500')] });
    await applyBook(test.dataSource, { prices: [fromNow('storage.io1', '0.1000')] });
    const logger = new RecordingLogger();
    await test.start({ databaseUrl: test.url, env: { ...RATE, LOG_LEVEL: 'debug' }, logger });
    const loads = logger.of('debug', 'PriceBookLoader').filter((line) => / loaded \(/.test(line));
    expect(loads[0]).toMatch(/^prices \d+ loaded \(5 list prices alone, organizations' next\)/);
    expect(loads[1]).toMatch(/^prices \d+ loaded \(5 records\)/);
  }, 30_000);
});
