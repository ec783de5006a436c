import { Logger } from '@nestjs/common';
import { ManualClock } from '@app/clock';
import type { PriceBookRepository } from '../database/price-book.repository';
import { renderPriceList, type PriceListResponse } from '../rendering/price-list-response';
import { priceRecord } from '../core/price-record.fixture';
import { PriceListRenderer, PriceListRenderTimeoutError } from './price-list-renderer';
import { pricesInMemory, type PricesInMemoryFixture } from './prices-in-memory.fixture';
import type { PricingData } from '../database/pricing-data';

// What is served around a scheduled instant: the list for it is rendered ahead and swapped in
// at the instant, by the timer or by the first request; a clock past every list held gets the
// list rendered on the spot. Fake timers; the clock is a ManualClock moved by hand.

// Every render of the list, ahead or on the spot (a small list renders inline), is counted.
jest.mock('../rendering/price-list-response', () => {
  const actual = jest.requireActual<typeof import('../rendering/price-list-response')>(
    '../rendering/price-list-response',
  );
  return { ...actual, renderPriceList: jest.fn(actual.renderPriceList) };
});
const rendered = jest.mocked(renderPriceList);

const T = Date.parse('2030-01-01T00:00:00Z');
const T2 = Date.parse('2030-02-01T00:00:00Z');

function data(): PricingData {
  return {
    records: [
      priceRecord({ amount: '1', validFrom: '2029-01-01T00:00:00Z', validUntil: new Date(T) }),
      priceRecord({ amount: '2', validFrom: new Date(T), validUntil: new Date(T2) }),
      priceRecord({ amount: '3', validFrom: new Date(T2) }),
    ],
    availability: new Map(),
    listWrites: [],
    version: '2',
    lastChangeId: '3',
  };
}

const amountOf = (list: PriceListResponse): string =>
  (JSON.parse(list.body.toString('utf8')) as { families: { prices: { amount: string }[] }[] }).families[0].prices[0]
    .amount;

describe('PriceListSchedule around a scheduled instant', () => {
  let clock: ManualClock;
  let prices: PricesInMemoryFixture;

  async function loadedAt(nowMs: number): Promise<void> {
    clock = new ManualClock(new Date(nowMs));
    const repository = {
      readVersion: () => Promise.resolve('2'),
      loadPricingData: () => Promise.resolve(data()),
    } as unknown as PriceBookRepository;
    prices = pricesInMemory(repository, clock);
    await prices.loader.check();
    rendered.mockClear();
  }

  // Only the timers the schedule arms are fake: loading and rendering give the event loop a turn
  // (setImmediate, libs/pricing/src/snapshot/slices.ts) whenever a slice lasts 8 ms of real time,
  // which a loaded machine reaches even for three records; a fake setImmediate would never fire.
  beforeEach(() =>
    jest.useFakeTimers({
      doNotFake: ['setImmediate', 'clearImmediate', 'nextTick', 'queueMicrotask', 'performance', 'hrtime'],
    }),
  );

  afterEach(async () => {
    await prices.close();
    jest.useRealTimers();
  });

  it('renders the list of the next instant ahead and swaps it in at the instant, by its timer', async () => {
    await loadedAt(T - 60_000);
    expect(amountOf(prices.state.current()!.priceList)).toBe('1');
    clock.set(new Date(T - 4_000));
    await jest.advanceTimersByTimeAsync(56_000); // the timer set for 5 s ahead of T
    expect(rendered).toHaveBeenCalledTimes(1); // the list from T on, rendered ahead
    clock.set(new Date(T));
    await jest.advanceTimersByTimeAsync(4_000); // the timer set for T
    const list = prices.state.current()!.priceList;
    expect([amountOf(list), list.builtForMs, list.expiresAtMs]).toEqual(['2', T, T2]);
    expect(rendered).toHaveBeenCalledTimes(1); // nothing rendered at the instant
  });

  it('a list rendered ahead that fails (its worker overran its limit): the list held stays, the instant still brings the next', async () => {
    await loadedAt(T - 60_000);
    const failed = jest
      .spyOn(PriceListRenderer.prototype, 'render')
      .mockRejectedValueOnce(new PriceListRenderTimeoutError(1, 10_000));
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      clock.set(new Date(T - 4_000));
      await jest.advanceTimersByTimeAsync(56_000); // the timer set for 5 s ahead of T: the render fails
      expect(failed).toHaveBeenCalledTimes(1);
      expect(errors.mock.calls).toEqual([
        [
          expect.stringMatching(
            /^rendering the next price list ahead failed: .*overran its limit.*; it renders at its instant$/,
          ),
        ],
      ]);
      expect(amountOf(prices.state.current()!.priceList)).toBe('1');
      clock.set(new Date(T));
      await jest.advanceTimersByTimeAsync(4_000); // the timer set for T
      const list = prices.state.current()!.priceList;
      expect([amountOf(list), list.builtForMs, list.expiresAtMs]).toEqual(['2', T, T2]);
      expect(rendered).toHaveBeenCalledTimes(1); // at the instant, by the timer
    } finally {
      failed.mockRestore();
      errors.mockRestore();
    }
  });

  it('a request at the instant, before the timer fired, gets the list rendered ahead', async () => {
    await loadedAt(T - 60_000);
    clock.set(new Date(T - 4_000));
    await jest.advanceTimersByTimeAsync(56_000);
    clock.set(new Date(T - 1)); // prepared, but not yet in force: not a moment early
    expect(amountOf(prices.state.current()!.priceList)).toBe('1');
    clock.set(new Date(T)); // the timer for T has not fired yet
    expect(amountOf(prices.state.current()!.priceList)).toBe('2');
    expect(rendered).toHaveBeenCalledTimes(1);
  });

  it('a load close to the next instant renders that list too before swapping in', async () => {
    await loadedAt(T - 2_000);
    clock.set(new Date(T));
    expect(amountOf(prices.state.current()!.priceList)).toBe('2');
    expect(rendered).not.toHaveBeenCalled();
  });

  it('a clock past every list held gets the list of its instant, rendered on the spot', async () => {
    await loadedAt(T - 60_000);
    clock.set(new Date(T2 + 1));
    const list = prices.state.current()!.priceList;
    expect([amountOf(list), list.builtForMs, list.expiresAtMs]).toEqual(['3', T2 + 1, Infinity]);
    expect(rendered).toHaveBeenCalledTimes(1);
    clock.set(new Date(T - 30_000)); // a clock set back: the list of that instant again
    expect(amountOf(prices.state.current()!.priceList)).toBe('1');
  });

  it('a list rendered on the spot is held: reading the state advanced it, and later requests reuse it', async () => {
    await loadedAt(T - 60_000);
    clock.set(new Date(T2 + 1));
    const list = prices.state.current()!.priceList;
    clock.set(new Date(T2 + 2));
    expect(prices.state.current()!.priceList).toBe(list);
    expect(prices.state.health().servable).toBe(true);
    expect(rendered).toHaveBeenCalledTimes(1);
  });
});
