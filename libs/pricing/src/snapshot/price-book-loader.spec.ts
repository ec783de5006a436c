import { Logger } from '@nestjs/common';
import { ManualClock } from '@app/clock';
import { ListHistory } from '../core/list-history';
import { priceRecord } from '../core/price-record.fixture';
import { runNow } from '../core/slices';
import { presentCut } from '../core/present-cut';
import type { PricingData, RecordsRead } from '../database/pricing-data';
import { renderPriceList, type PriceListResponse } from '../rendering/price-list-response';
import { PREPARE_AHEAD_MS, PricingSnapshot } from './pricing-snapshot';
import { pricesInMemory, pricingData, readsOf, type PricesInMemory } from './prices-in-memory.fixture';

// What is served around a scheduled instant: the loader's one timer prepares the list of the
// instant ahead of it, in a new snapshot swapped in whole; a request reads the list of its
// instant from the snapshot, and a clock past every list prepared gets the list rendered on
// demand. Reading has no effects. Fake timers; the clock is a ManualClock moved by hand.

// Every list prepared (rendered with its codings) is counted; a list rendered on demand is not.
jest.mock('../rendering/price-list-response', () => {
  const actual = jest.requireActual<typeof import('../rendering/price-list-response')>(
    '../rendering/price-list-response',
  );
  return { ...actual, renderPriceList: jest.fn(actual.renderPriceList) };
});
const prepared = jest.mocked(renderPriceList);

const T = Date.parse('2030-01-01T00:00:00Z');
const T2 = Date.parse('2030-02-01T00:00:00Z');

function data(): PricingData {
  return pricingData([
    priceRecord({ amount: '1', validFrom: '2029-01-01T00:00:00Z', validUntil: T }),
    priceRecord({ amount: '2', validFrom: T, validUntil: T2 }),
    priceRecord({ amount: '3', validFrom: T2 }),
  ]);
}

const amountOf = (list: PriceListResponse): string =>
  (JSON.parse(list.body.toString('utf8')) as { families: { prices: { amount: string }[] }[] }).families[0].prices[0]
    .amount;

describe('PriceBookLoader around a scheduled instant', () => {
  let clock: ManualClock;
  let prices: PricesInMemory;

  async function loadedAt(nowMs: number): Promise<void> {
    clock = new ManualClock(new Date(nowMs));
    prices = await pricesInMemory(
      readsOf(() => Promise.resolve(data())),
      clock,
    );
    await prices.loader.check();
    prepared.mockClear();
  }

  const served = (): PriceListResponse => prices.state.priceList()!;

  /** Waits (turning the real event loop: lists compress on libuv's pool) until the loader swaps a snapshot in. */
  async function swapped(): Promise<void> {
    const shown = prices.loader.snapshot;
    const deadline = performance.now() + 5_000;
    while (prices.loader.snapshot === shown) {
      if (performance.now() > deadline) throw new Error('no snapshot swapped in within 5 s');
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // Only timers are fake: serializing and compressing give the event loop turns (setImmediate,
  // core/slices.ts) and use libuv's thread pool, which fake timers would never let finish.
  beforeEach(() =>
    jest.useFakeTimers({
      doNotFake: ['setImmediate', 'clearImmediate', 'nextTick', 'queueMicrotask', 'performance', 'hrtime'],
    }),
  );

  afterEach(() => {
    prices.close();
    jest.useRealTimers();
  });

  it('prepares the list of the next instant ahead, by its one timer, and serves it from the instant', async () => {
    await loadedAt(T - 60_000);
    expect(amountOf(served())).toBe('1');
    clock.set(new Date(T - PREPARE_AHEAD_MS));
    await jest.advanceTimersByTimeAsync(60_000 - PREPARE_AHEAD_MS); // the timer set for 5 s ahead of T
    await swapped(); // in a new snapshot
    expect(prepared).toHaveBeenCalledTimes(1); // the list from T on, prepared ahead
    expect(amountOf(served())).toBe('1');
    clock.set(new Date(T));
    const list = served();
    expect([amountOf(list), list.builtForMs, list.expiresAtMs]).toEqual(['2', T, T2]);
    expect(served()).toBe(list); // prepared, not rendered for the request
    expect(prepared).toHaveBeenCalledTimes(1); // nothing rendered at the instant
  });

  it('a list prepared ahead that fails to render: logged, the instant still brings the next list, the timer tries again', async () => {
    await loadedAt(T - 60_000);
    prepared.mockRejectedValueOnce(new Error('out of memory'));
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const failures: unknown[] = [];
    prices.loader.renderFailures$.subscribe((failure) => failures.push(failure));
    try {
      clock.set(new Date(T - PREPARE_AHEAD_MS));
      await jest.advanceTimersByTimeAsync(60_000 - PREPARE_AHEAD_MS); // the timer set for 5 s ahead of T: it fails
      expect(prepared).toHaveBeenCalledTimes(1);
      expect(errors.mock.calls).toEqual([
        [
          expect.stringMatching(
            /^preparing the next price list failed: .*out of memory.*; it renders on demand meanwhile$/,
          ),
        ],
      ]);
      expect(failures).toHaveLength(1);
      expect(amountOf(served())).toBe('1');
      clock.set(new Date(T));
      const list = served(); // rendered on demand: never the outdated list
      expect([amountOf(list), list.builtForMs, list.expiresAtMs]).toEqual(['2', T, T2]);
      await jest.advanceTimersByTimeAsync(1_000); // the timer tries again
      await swapped();
      expect(prepared).toHaveBeenCalledTimes(2);
      expect(served()).toBe(served());
      expect(amountOf(served())).toBe('2');
    } finally {
      errors.mockRestore();
    }
  });

  it('a request at the instant, before the timer fired, gets the list prepared ahead', async () => {
    await loadedAt(T - 60_000);
    clock.set(new Date(T - PREPARE_AHEAD_MS));
    await jest.advanceTimersByTimeAsync(60_000 - PREPARE_AHEAD_MS);
    await swapped();
    clock.set(new Date(T - 1)); // prepared, but not yet in force: not a moment early
    expect(amountOf(served())).toBe('1');
    clock.set(new Date(T)); // no timer runs at T
    expect(amountOf(served())).toBe('2');
    expect(prepared).toHaveBeenCalledTimes(1);
  });

  it('a load close to the next instant prepares that list too before swapping in', async () => {
    await loadedAt(T - 2_000);
    clock.set(new Date(T));
    expect(served()).toBe(served());
    expect(amountOf(served())).toBe('2');
    expect(prepared).not.toHaveBeenCalled();
  });

  it('a clock past every list prepared gets the list of its instant, rendered on demand', async () => {
    await loadedAt(T - 60_000);
    clock.set(new Date(T2 + 1));
    const list = served();
    expect([amountOf(list), list.builtForMs, list.expiresAtMs]).toEqual(['3', T2 + 1, Infinity]);
    expect(prepared).not.toHaveBeenCalled();
    clock.set(new Date(T - 30_000)); // a clock set back: the list of that instant again
    expect(amountOf(served())).toBe('1');
  });

  it('reading has no effects: a list rendered on demand is not held, the snapshot stays the one loaded', async () => {
    await loadedAt(T - 60_000);
    const loaded = prices.loader.snapshot;
    clock.set(new Date(T2 + 1));
    const list = served();
    clock.set(new Date(T2 + 2));
    const again = served();
    expect(again).not.toBe(list);
    expect(again.etag).toBe(list.etag);
    expect(prices.state.health().servable).toBe(true);
    expect(prices.loader.snapshot).toBe(loaded);
    expect(prepared).not.toHaveBeenCalled();
  });
});

describe('PriceBookLoader and where the price book stands', () => {
  it('reads everything again at the version it holds when the latest change is another (a restore, then a write)', async () => {
    const held = { ...data(), lastChangedAt: 1_000 };
    const restored = { ...data(), lastChangedAt: 2_000, records: [priceRecord({ amount: '9', validFrom: T })] };
    let head = { version: '2', lastChangeId: '3', lastChangedAt: 1_000, readAt: 0, marginMs: 0 };
    const loadPricingData = jest.fn().mockResolvedValueOnce(held).mockResolvedValue(restored);
    // Nothing after change 3, whose instant is not the one read: it does not follow.
    const loadChangesSince = jest.fn((sinceChangeId: string) =>
      Promise.resolve({
        ...restored,
        records: [],
        listLog: [],
        sinceChangeId,
        sinceChangedAt: 2_000,
        productKeys: [],
        writeCount: 0,
        recordCount: 1,
      }),
    );
    const logged = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const prices = await pricesInMemory(
      { readHead: () => Promise.resolve(head), loadPricingData, loadChangesSince },
      new ManualClock(new Date(T - 60_000)),
    );
    try {
      await prices.loader.check();
      await prices.loader.check(); // the head it holds: confirmed, nothing read
      expect([loadPricingData.mock.calls.length, loadChangesSince.mock.calls.length]).toEqual([1, 0]);
      head = { ...head, lastChangedAt: 2_000 };
      await prices.loader.check();
      expect(loadChangesSince.mock.calls).toEqual([['3']]);
      expect(loadPricingData).toHaveBeenCalledTimes(2);
      expect(logged.mock.calls.map(([message]) => String(message))).toContain(
        'changes since version 2 do not follow it: reading every price again',
      );
      expect(prices.loader.snapshot?.recordCount).toBe(1);
      await prices.loader.check(); // the new head: confirmed
      expect(loadPricingData).toHaveBeenCalledTimes(2);
    } finally {
      prices.close();
      logged.mockRestore();
    }
  });
});

describe('PriceBookLoader and the feed of the list', () => {
  it('hashes the feed it serves as a history built at once hashes it (before showing it, or in slices after)', async () => {
    // 4,000 products, each listed, re-priced and ended: 12,000 changes, more than one slice.
    const records = Array.from({ length: 4_000 }, (_, i) => [
      priceRecord({
        id: 2 * i + 1,
        productKey: `compute.h${Math.floor(i / 1000)}.${i % 1000}`,
        unitType: 'seconds',
        amount: '1',
        validFrom: '2029-01-01T00:00:00Z',
        validUntil: T,
      }),
      priceRecord({
        id: 2 * i + 2,
        productKey: `compute.h${Math.floor(i / 1000)}.${i % 1000}`,
        unitType: 'seconds',
        amount: '2',
        validFrom: T,
        validUntil: T2,
      }),
    ]).flat();
    const prices = await pricesInMemory(
      readsOf(() => Promise.resolve(pricingData(records))),
      new ManualClock(new Date(T2 + 60_000)),
    );
    try {
      await prices.loader.check();
      const history = prices.loader.snapshot!.history;
      const deadline = performance.now() + 10_000;
      while (!history.hashed && performance.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
      expect(history.hashed).toBe(true);
      const eager = runNow(ListHistory.build({ records, ends: new Map(), writes: [], lastChangeId: 3 }));
      const all = (h: ListHistory) =>
        runNow(h.changesAfter({ at: -8.64e15, productKey: '' }, 20_000, Infinity)).changes;
      expect(all(history)).toHaveLength(12_000);
      expect(all(history).map((c) => c.hash.toString('hex'))).toEqual(all(eager).map((c) => c.hash.toString('hex')));
    } finally {
      prices.close();
    }
  });
});

describe('PriceBookLoader on a long past', () => {
  // A key re-priced by four writes a month apart, another ended long ago, an organization's price:
  // the first read takes what the present needs (PriceSnapshotReads, LISTED_FROM_CUT), the list is
  // served from it, and the past comes with organizations' prices in the next read.
  const DAY = 86_400_000;
  const W = [0, 30, 60, 90].map((days) => Date.parse('2029-01-01T00:00:00Z') + days * DAY);
  const NOW = W[3] + DAY;
  const gp1 = (i: number) =>
    priceRecord({
      id: i + 1,
      amount: `0.0${i + 1}`,
      validFrom: W[i],
      validUntil: i < 3 ? W[i + 1] : null,
      recordedAt: W[i],
    });
  const list = [
    ...[0, 1, 2, 3].map(gp1),
    priceRecord({ id: 9, productKey: 'storage.snapshot', validFrom: W[0], validUntil: W[0] + DAY, recordedAt: W[0] }),
  ];
  const agreed = priceRecord({ id: 10, organizationId: 'org-1', amount: '0.01', validFrom: W[0], recordedAt: W[0] });

  it('serves the present first, then reads the past and organizations once: loaded, its past served, only then', async () => {
    const present = presentCut(W, NOW)!;
    const first = list.filter((record) => record.validUntil === null || record.validUntil >= present.cut);
    let readPast!: (read: RecordsRead) => void;
    const loadPastAndOrganizationPrices = jest.fn(() => new Promise<RecordsRead>((resolve) => (readPast = resolve)));
    const reads = {
      ...readsOf(() => Promise.resolve(pricingData(first, { listWrites: W, listOnly: true, present, readAt: NOW }))),
      loadPastAndOrganizationPrices,
    };
    const prices = await pricesInMemory(reads, new ManualClock(new Date(NOW)));
    const whole = await PricingSnapshot.build(pricingData([...list, agreed], { listWrites: W }), NOW);
    let loaded = false;
    void prices.loader.loaded().then(() => (loaded = true));
    try {
      const checking = prices.loader.check();
      while (loadPastAndOrganizationPrices.mock.calls.length === 0) await new Promise((r) => setImmediate(r));
      expect(loadPastAndOrganizationPrices).toHaveBeenCalledWith(present.cut);
      const shown = prices.loader.snapshot!;
      expect([shown.heldFrom, shown.recordCount, shown.hasOrganizationPrices]).toEqual([W[2], 4, false]);
      const served = prices.state.priceList()!;
      expect(served.body.equals((await renderPriceList(whole.history.listAt(NOW))).body)).toBe(true);
      expect([served.lastChangedMs, served.previousChangeMs]).toEqual([W[3], W[2]]);
      expect(loaded).toBe(false);
      await new Promise((r) => setTimeout(r, 50));
      expect(shown.history.hashed).toBe(false); // its feed is not the list's: never hashed

      readPast({ records: [...list.filter((record) => !first.includes(record)), agreed], ends: new Map() });
      await checking;
      const held = prices.loader.snapshot!;
      expect([held.heldFrom, held.recordCount, held.hasOrganizationPrices, loaded]).toEqual([-Infinity, 6, true, true]);
      expect(loadPastAndOrganizationPrices).toHaveBeenCalledTimes(1);
      for (const at of [W[0], W[0] + DAY, W[1], W[2] - 1, NOW])
        expect(held.documentAt(at)).toEqual(whole.documentAt(at));
      expect(held.organizationPriceAt('storage.gp1', 'org-1', NOW)?.amount).toBe('0.01');
      expect(prices.state.priceList()!.body.equals(served.body)).toBe(true);
    } finally {
      prices.close();
    }
  });
});
