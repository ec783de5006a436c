import { Logger } from '@nestjs/common';
import { ManualClock } from '@app/clock';
import { join } from 'node:path';
import type { PriceBookRepository } from '../database/price-book.repository';
import { PriceListAnswerCounts } from '../http/price-list-answer-counts';
import { PricingMetrics } from './pricing-metrics';
import type { PriceRecord } from '../core/price-record';
import { priceRecord } from '../core/price-record.fixture';
import { PriceListRenderer, workerScript } from '../snapshot/price-list-renderer';
import { pricesInMemory, type PricesInMemoryFixture } from '../snapshot/prices-in-memory.fixture';
import type { PricingChanges, PricingData } from '../database/pricing-data';

// A reload whose list hangs on the render worker: the last list keeps being served, the failure is counted
// and logs the failure once, and a later check renders again. Real timers and worker threads
// (the built price-list-worker.js: the Jest global setup builds first).

/** The worker script the renderer starts next: a list of 4 prices or more renders on the worker. */
let script: string | undefined;
const renderer = (): PriceListRenderer =>
  new PriceListRenderer({ inlineBelow: 4, workerScript: () => script, deadlineMs: () => 400 });

const NEVER_ANSWERS = join(__dirname, '../snapshot/__fixtures__/never-answers.worker.mjs');

/** The price book in the database: each version adds the records of one write. */
class StoredBook {
  private readonly writes: PriceRecord[][] = [];

  write(records: PriceRecord[]): void {
    this.writes.push(records);
  }

  get version(): string {
    return String(this.writes.length);
  }

  data(): PricingData {
    const records = this.writes.flat();
    return { records, availability: new Map(), listWrites: [], version: this.version, lastChangeId: this.version };
  }

  changesSince(sinceChangeId: string): PricingChanges {
    const written = this.writes.slice(Number(sinceChangeId)).flat();
    return {
      ...this.data(),
      records: written,
      sinceChangeId,
      productKeys: written.map((r) => r.productKey),
      writeCount: this.writes.length - Number(sinceChangeId),
      recordCount: this.writes.flat().length,
    };
  }
}

const price = (size: number, amount: string): PriceRecord =>
  priceRecord({ productKey: `compute.g2.${size}`, unitType: 'seconds', unitCount: 3600, amount });

/** The value of a sample in the registry's text exposition. */
async function sample(metrics: PricingMetrics, line: string): Promise<number | undefined> {
  const found = (await metrics.registry.metrics()).split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

const TIMEOUTS = 'pricing_price_list_render_failures_total{reason="timeout"}';
const ERRORS = 'pricing_price_list_render_failures_total{reason="error"}';

describe('the prices in memory when the list does not render', () => {
  let book: StoredBook;
  let prices: PricesInMemoryFixture;
  let metrics: PricingMetrics;
  let errors: jest.SpyInstance;
  let warnings: jest.SpyInstance;

  beforeEach(() => {
    book = new StoredBook();
    const repository = {
      readVersion: () => Promise.resolve(book.version),
      loadPricingData: () => Promise.resolve(book.data()),
      loadChangesSince: (since: string) => Promise.resolve(book.changesSince(since)),
    } as unknown as PriceBookRepository;
    const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
    const rendering = renderer();
    prices = pricesInMemory(repository, clock, {}, rendering);
    metrics = new PricingMetrics(prices.loader, prices.state, rendering, new PriceListAnswerCounts());
    errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(async () => {
    metrics.onModuleDestroy();
    await prices.close();
    errors.mockRestore();
    warnings.mockRestore();
  });

  it('keeps serving the last list, counts and logs the overrun, and renders again at the next check', async () => {
    script = NEVER_ANSWERS;
    book.write([price(1, '1'), price(2, '2'), price(4, '3')]);
    await prices.loader.check(); // 3 prices: inline
    const first = prices.state.current()!;
    expect(first.snapshot.version).toBe('1');
    expect([await sample(metrics, TIMEOUTS), await sample(metrics, ERRORS)]).toEqual([0, 0]);

    book.write([price(8, '4'), price(16, '5')]);
    await prices.loader.check(); // 5 prices: on the worker, which never answers
    const held = prices.state.current()!;
    expect(held.snapshot).toBe(first.snapshot);
    expect(held.priceList).toBe(first.priceList);
    expect(held.priceList.etag).toBe(first.priceList.etag);
    expect(await sample(metrics, TIMEOUTS)).toBe(1);
    expect(await sample(metrics, ERRORS)).toBe(0);
    expect(errors.mock.calls).toEqual([
      [
        expect.stringMatching(
          /^the list of prices 2 did not render: rendering 5 prices on the price list worker overran its limit of 400 ms.*; serving the list of version 1, rendering again at the next check$/,
        ),
      ],
    ]);
    // The database was read: it is no outage.
    expect(prices.state.health().databaseReachable).toBe(true);
    expect(warnings).not.toHaveBeenCalled();

    await prices.loader.check(); // the version still differs: loaded and rendered again, on a new worker
    expect(prices.state.current()!.priceList).toBe(first.priceList);
    expect(await sample(metrics, TIMEOUTS)).toBe(2);
    expect(errors).toHaveBeenCalledTimes(2);

    script = workerScript(); // the built price-list-worker.js
    await prices.loader.check();
    const renewed = prices.state.current()!;
    expect(renewed.snapshot.version).toBe('2');
    expect(renewed.priceList.etag).not.toBe(first.priceList.etag);
    const body = JSON.parse(renewed.priceList.body.toString('utf8')) as { families: { prices: unknown[] }[] };
    expect(body.families.flatMap((f) => f.prices)).toHaveLength(5);
    expect([await sample(metrics, TIMEOUTS), await sample(metrics, ERRORS)]).toEqual([2, 0]);
    expect(errors).toHaveBeenCalledTimes(2);
  });

  it('a first load whose list hangs serves nothing yet, and the next check loads it', async () => {
    script = NEVER_ANSWERS;
    book.write([price(1, '1'), price(2, '2'), price(4, '3'), price(8, '4')]);
    await prices.loader.check();
    expect(prices.state.current()).toBeUndefined();
    expect(errors.mock.calls).toEqual([[expect.stringMatching(/did not render: .*; serving nothing yet/)]]);
    script = workerScript();
    await prices.loader.check();
    await prices.loader.loaded();
    expect(prices.state.current()!.snapshot.version).toBe('1');
    expect(await sample(metrics, TIMEOUTS)).toBe(1);
  });
});
