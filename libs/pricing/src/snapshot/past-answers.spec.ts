import { ManualClock } from '@app/clock';
import { priceRecord } from '../core/price-record.fixture';
import { resolvePricingOptions } from '../options/pricing-options';
import { FEED_START, MAX_CHANGES_PER_PAGE } from '../rendering/changes-page';
import { PastAnswers } from './past-answers';
import { pricesInMemory, pricingData, readsOf, type PricesInMemory } from './prices-in-memory.fixture';

// The feed's first page is prepared once it is full, before anyone asks for it: every client that
// follows the feed from its start asks for it first.

const NOW = Date.parse('2026-06-01T00:00:00Z');

/** A book of `count` list prices of distinct keys, each a change of the feed. */
function book(count: number) {
  return pricingData(
    Array.from({ length: count }, (_, i) =>
      priceRecord({
        id: i + 1,
        productKey: `compute.h${Math.floor(i / 1000)}.${i % 1000}`,
        unitType: 'seconds',
        unitCount: 3600,
        validFrom: NOW - (i + 1) * 60_000,
        recordedAt: NOW - (i + 1) * 60_000,
      }),
    ),
    { readAt: NOW, marginMs: 1_000 },
  );
}

describe('PastAnswers, the feed’s first page', () => {
  let prices: PricesInMemory;
  let past: PastAnswers;

  async function loaded(count: number): Promise<void> {
    const clock = new ManualClock(new Date(NOW));
    prices = await pricesInMemory(
      readsOf(() => Promise.resolve(book(count))),
      clock,
    );
    past = new PastAnswers(prices.state, resolvePricingOptions({}), clock, prices.loader);
    past.onModuleInit();
    await prices.loader.check();
  }

  afterEach(() => prices.close());

  it('is prepared once full, before it is asked for, and served as prepared', async () => {
    await loaded(MAX_CHANGES_PER_PAGE + 1);
    expect(past.preparedCount).toBe(1);
    const snapshot = prices.state.current()!;
    const first = await past.changes(snapshot, FEED_START, MAX_CHANGES_PER_PAGE, NOW)!;
    expect(past.preparedCount).toBe(1);
    const page = JSON.parse(first.ok.identity.body!.toString('utf8')) as { changes: unknown[]; has_more: boolean };
    expect(page.changes).toHaveLength(MAX_CHANGES_PER_PAGE);
    expect(page.has_more).toBe(true);
    expect(first.ok.identity.headers['cache-control']).toBe('public, max-age=604800, immutable');
  });

  it('is not prepared ahead while it is the last page (it may still grow)', async () => {
    await loaded(MAX_CHANGES_PER_PAGE);
    expect(past.preparedCount).toBe(0);
  });
});
