import { ManualClock } from '@app/clock';
import { priceRecord } from '../core/price-record.fixture';
import { resolvePricingOptions } from '../options/pricing-options';
import { FEED_START, MAX_CHANGES_PER_PAGE } from '../rendering/changes-page';
import type { PreparedAnswers } from '../rendering/price-list-response';
import { PastAnswers } from './past-answers';
import { HASHED_AT_ONCE } from './pricing-snapshot';
import { pricesInMemory, pricingData, readsOf, type PricesInMemory } from './prices-in-memory.fixture';

// The feed's first page is prepared once it is full, before anyone asks for it: every client that
// follows the feed from its start asks for it first.

const NOW = Date.parse('2026-06-01T00:00:00Z');

/**
 * A book of `count` list prices of `keys` keys, each a change of the feed: a minute apart, those
 * of a key one after the other (few are listed now: the list renders fast however long its past).
 */
function book(count: number, keys = count) {
  return pricingData(
    Array.from({ length: count }, (_, i) =>
      priceRecord({
        id: i + 1,
        productKey: `compute.h${Math.floor((i % keys) / 1000)}.${i % keys}`,
        unitType: 'seconds',
        unitCount: 3600,
        validFrom: NOW - (i + 1) * 60_000,
        validUntil: i < keys ? null : NOW - (i + 1 - keys) * 60_000,
        recordedAt: NOW - (i + 1) * 60_000,
      }),
    ),
    { readAt: NOW, marginMs: 1_000 },
  );
}

/** Waits, turning the event loop, until `done` holds (at most 30 s). */
async function until(done: () => boolean): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (!done()) {
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('PastAnswers, the feed’s first page', () => {
  let prices: PricesInMemory;
  let past: PastAnswers;

  async function loaded(count: number, keys = count): Promise<void> {
    const clock = new ManualClock(new Date(NOW));
    prices = await pricesInMemory(
      readsOf(() => Promise.resolve(book(count, keys))),
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

  it('on a feed too long to hash before it is shown: prepared once hashed that far; hashing waits for answers being prepared', async () => {
    await loaded(HASHED_AT_ONCE + 1, 10);
    const history = prices.state.current()!.history;
    expect(history.hashed).toBe(false);
    await until(() => past.preparedCount === 1);
    expect(history.sizeBefore(Infinity)).toBeLessThan(history.changeCount);
    // An answer a request waits for (PastAnswers prepares each so): the feed is not hashed meanwhile.
    let during = -1;
    await prices.loader.inForeground(async () => {
      const before = history.sizeBefore(Infinity);
      await new Promise((resolve) => setTimeout(resolve, 100));
      during = history.sizeBefore(Infinity) - before;
    });
    expect(during).toBe(0);
    const after = history.sizeBefore(Infinity);
    await until(() => history.sizeBefore(Infinity) > after);
  }, 60_000);

  it('a last page being prepared is given to requests that see no later change, read again for one that does', async () => {
    await loaded(100);
    const snapshot = prices.state.current()!;
    const earlier = NOW - 30 * 60_000; // the changes of the 71 minutes before it
    const reading = past.changes(snapshot, FEED_START, MAX_CHANGES_PER_PAGE, earlier)!;
    expect(past.changes(snapshot, FEED_START, MAX_CHANGES_PER_PAGE, earlier)).toBe(reading);
    const later = past.changes(snapshot, FEED_START, MAX_CHANGES_PER_PAGE, NOW)!;
    const changesOf = async (answers: Promise<PreparedAnswers>) =>
      (JSON.parse((await answers).ok.identity.body!.toString('utf8')) as { changes: unknown[] }).changes;
    expect(await changesOf(reading)).toHaveLength(71);
    expect(await changesOf(later)).toHaveLength(100);
  });

  it('is not prepared ahead while it is the last page (it may still grow)', async () => {
    await loaded(MAX_CHANGES_PER_PAGE);
    expect(past.preparedCount).toBe(0);
  });
});
