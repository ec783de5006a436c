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
    // Four writes re-pricing both: the first prices of each end at the second write, before the cut.
    for (const [i, amount] of ['0.0490', '0.0500', '0.0510', '0.0520'].entries()) {
      await applyBook(test.dataSource, {
        prices: [fromNow('storage.gp1', amount), ...(i < 2 ? [fromNow('storage.snapshot', `0.06${i}`)] : [])],
      });
      instants.push(new Date(Date.now() - 1).toISOString());
    }
    logger = new RecordingLogger();
    started = await test.start({ databaseUrl: test.url, env: { ...RATE, LOG_LEVEL: 'debug' }, logger });
  }, 60_000);

  it('read the present first: fewer list prices than the book holds, then the rest with organizations', async () => {
    const loads = logger.of('debug', 'PriceBookLoader').filter((line) => / loaded \(/.test(line));
    const [count] = await test.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM price_record WHERE organization_id IS NULL`,
    );
    expect(count.n).toBe(8);
    // The first price of each (ended at the second write) is left for the second read.
    expect(loads[0]).toMatch(/^prices \d+ loaded \(6 list prices alone, organizations' next\)/);
    expect(loads[1]).toMatch(/^prices \d+ loaded \(8 records\)/);
  });

  it('serves what an instance that saw every write serves: the list, the list at every instant, the feed', async () => {
    expect(await body(started, '/v1/pricing')).toBe(await body(live, '/v1/pricing'));
    for (const instant of instants) {
      expect(await body(started, `/v1/pricing/at/${instant}`)).toBe(await body(live, `/v1/pricing/at/${instant}`));
    }
    expect(await body(started, '/v1/pricing/changes')).toBe(await body(live, '/v1/pricing/changes'));
    expect(JSON.parse(await body(started, '/v1/pricing/changes'))).toMatchObject({ has_more: false });
  });
});
