import { ManualClock } from '@app/clock';
import type { DatabaseConnection } from '@app/database';
import type { PriceBookRepository } from '../database/price-book.repository';
import { renderPriceList, type PriceListResponse } from '../http/price-list-response';
import { priceRecord } from '../price-list/price-record.fixture';
import { resolvePricingOptions } from '../pricing.options';
import { PriceBookCache } from './price-book-cache';
import type { PricingData } from './pricing-snapshot';

// What is served around a scheduled instant: the list for it is rendered ahead and swapped in
// at the instant, by the timer or by the first request; a clock past every list held gets the
// list rendered on the spot. Fake timers; the clock is a ManualClock moved by hand.

// Every render of the list, ahead or on the spot (a small list renders inline), is counted.
jest.mock('../http/price-list-response', () => {
  const actual = jest.requireActual<typeof import('../http/price-list-response')>('../http/price-list-response');
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

describe('PriceBookCache around a scheduled instant', () => {
  let clock: ManualClock;
  let cache: PriceBookCache;

  async function loadedAt(nowMs: number): Promise<void> {
    clock = new ManualClock(new Date(nowMs));
    const repository = {
      readVersion: () => Promise.resolve('2'),
      loadPricingData: () => Promise.resolve(data()),
    } as unknown as PriceBookRepository;
    cache = new PriceBookCache(resolvePricingOptions({}), repository, {} as DatabaseConnection, clock);
    await cache.check();
    rendered.mockClear();
  }

  beforeEach(() => jest.useFakeTimers());

  afterEach(async () => {
    await cache.onApplicationShutdown();
    jest.useRealTimers();
  });

  it('renders the list of the next instant ahead and swaps it in at the instant, by its timer', async () => {
    await loadedAt(T - 60_000);
    expect(amountOf(cache.current()!.priceList)).toBe('1');
    clock.set(new Date(T - 4_000));
    await jest.advanceTimersByTimeAsync(56_000); // the timer set for 5 s ahead of T
    expect(rendered).toHaveBeenCalledTimes(1); // the list from T on, rendered ahead
    clock.set(new Date(T));
    await jest.advanceTimersByTimeAsync(4_000); // the timer set for T
    const list = cache.current()!.priceList;
    expect([amountOf(list), list.builtForMs, list.expiresAtMs]).toEqual(['2', T, T2]);
    expect(rendered).toHaveBeenCalledTimes(1); // nothing rendered at the instant
  });

  it('a request at the instant, before the timer fired, gets the list rendered ahead', async () => {
    await loadedAt(T - 60_000);
    clock.set(new Date(T - 4_000));
    await jest.advanceTimersByTimeAsync(56_000);
    clock.set(new Date(T - 1)); // prepared, but not yet in force: not a moment early
    expect(amountOf(cache.current()!.priceList)).toBe('1');
    clock.set(new Date(T)); // the timer for T has not fired yet
    expect(amountOf(cache.current()!.priceList)).toBe('2');
    expect(rendered).toHaveBeenCalledTimes(1);
  });

  it('a load close to the next instant renders that list too before swapping in', async () => {
    await loadedAt(T - 2_000);
    clock.set(new Date(T));
    expect(amountOf(cache.current()!.priceList)).toBe('2');
    expect(rendered).not.toHaveBeenCalled();
  });

  it('a clock past every list held gets the list of its instant, rendered on the spot', async () => {
    await loadedAt(T - 60_000);
    clock.set(new Date(T2 + 1));
    const list = cache.current()!.priceList;
    expect([amountOf(list), list.builtForMs, list.expiresAtMs]).toEqual(['3', T2 + 1, Infinity]);
    expect(rendered).toHaveBeenCalledTimes(1);
    clock.set(new Date(T - 30_000)); // a clock set back: the list of that instant again
    expect(amountOf(cache.current()!.priceList)).toBe('1');
  });
});
