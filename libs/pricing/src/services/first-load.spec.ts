import { ManualClock } from '@app/clock';
import type { PricingData } from '../database/pricing-data';
import { presentCut } from '../core/present-cut';
import { priceRecord } from '../core/price-record.fixture';
import { PricingUnavailableError } from '../errors/pricing-error';
import { PastAnswers } from '../snapshot/past-answers';
import { resolvePricingOptions as pastOptions } from '../options/pricing-options';
import { pricesInMemory, pricingData, readsOf, type PricesInMemory } from '../snapshot/prices-in-memory.fixture';
import { PricingService } from './pricing.service';

// A start-up reads the list prices first and serves them (the public list, list prices,
// availability), then every price: an organization's lookup is refused as unavailable until then,
// never answered with the list price. The second read is held until the test lets it finish.

const LIST = priceRecord({ amount: '0.0480' });
const AGREED = priceRecord({ organizationId: 'org_42', amount: '0.0400' });

const NOW = new Date('2027-01-01T00:00:00Z');

/** The book read at NOW: every write up to it is seen, so the book as recorded now is the book read. */
function data(listOnly: boolean): PricingData {
  return pricingData(listOnly ? [LIST] : [LIST, AGREED], { listOnly, readAt: NOW.getTime() });
}

/** Resolves once `condition` holds, turning the event loop meanwhile (at most 5 s). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('PriceBookLoader at start-up: the list prices first, then every price', () => {
  let prices: PricesInMemory;
  let service: PricingService;
  let reads: boolean[];

  /**
   * The prices in memory and PricingService on `loadPricingData` (the first read, list prices alone,
   * and the second, organizations' prices alone: what it gives beyond the first), whether each read
   * was of list prices alone in `reads`.
   */
  async function startOn(loadPricingData: (listOnly: boolean) => Promise<PricingData>): Promise<void> {
    reads = [];
    const repository = {
      ...readsOf(({ listOnly = false } = {}) => {
        reads.push(listOnly);
        return loadPricingData(listOnly);
      }),
      loadOrganizationPrices: async () => {
        reads.push(false);
        const every = await loadPricingData(false);
        return { records: every.records.filter((record) => record.organizationId !== null), ends: new Map() };
      },
    };
    const clock = new ManualClock(NOW);
    prices = await pricesInMemory(repository, clock);
    service = new PricingService(
      prices.state,
      prices.loader,
      new PastAnswers(prices.state, pastOptions({}), clock, prices.loader),
      clock,
    );
  }

  afterEach(() => prices.close());

  it('serves the list prices while the rest is read, refuses organizations until it is, and loads once both are read', async () => {
    let readEverything!: () => void;
    const everything = new Promise<void>((resolve) => (readEverything = resolve));
    await startOn(async (listOnly) => {
      if (!listOnly) await everything;
      return data(listOnly);
    });
    let loaded = false;
    void prices.loader.loaded().then(() => (loaded = true));
    const checked = prices.loader.check();
    await until(() => prices.state.current() !== undefined && reads.length === 2);

    expect(reads).toEqual([true, false]);
    expect(prices.state.health().servable).toBe(true);
    expect(service.priceList().families).toHaveLength(1);
    expect(service.priceAt('storage.gp1')).toMatchObject({ found: true, price: { amount: '0.0480' } });
    expect(() => service.assertOrderable('storage.gp1')).not.toThrow();
    expect(() => service.priceAt('storage.gp1', { organizationId: 'org_42' })).toThrow(PricingUnavailableError);
    expect(() =>
      service.costOfUsage(
        'storage.gp1',
        { from: new Date('2027-01-01T00:00:00Z'), to: new Date('2027-01-02T00:00:00Z'), sizeGib: '1' },
        { organizationId: 'org_42' },
      ),
    ).toThrow(PricingUnavailableError);
    expect(loaded).toBe(false);

    readEverything();
    await checked;
    expect(loaded).toBe(true);
    expect(service.priceAt('storage.gp1', { organizationId: 'org_42' })).toMatchObject({
      found: true,
      price: { amount: '0.0400' },
    });
    // The key's list price is kept beside the organization's added to it.
    expect(service.priceAt('storage.gp1')).toMatchObject({ found: true, price: { amount: '0.0480' } });
    expect(service.priceAt('storage.gp1', { organizationId: 'org_7' })).toMatchObject({
      found: true,
      price: { amount: '0.0480' },
    });

    await prices.loader.check(); // the same version, every price held: confirmed, nothing read
    expect(reads).toEqual([true, false]);
  });

  it('reads every price again at the next check when that read failed, serving the list prices meanwhile', async () => {
    let fail = true;
    await startOn((listOnly) =>
      !listOnly && fail ? Promise.reject(new Error('connection lost')) : Promise.resolve(data(listOnly)),
    );

    await prices.loader.check();
    expect(reads).toEqual([true, false]);
    expect(service.priceAt('storage.gp1')).toMatchObject({ found: true });
    expect(() => service.priceAt('storage.gp1', { organizationId: 'org_42' })).toThrow(PricingUnavailableError);

    fail = false;
    await prices.loader.check();
    expect(reads).toEqual([true, false, false]);
    expect(service.priceAt('storage.gp1', { organizationId: 'org_42' })).toMatchObject({ found: true });
  });
});

describe('PriceBookLoader at start-up on a long past: the present first, then the past', () => {
  // storage.gp1 priced by five writes a month apart: the first read holds the prices whose listing
  // reaches the cut (core/present-cut.ts), and the list from its second latest write on.
  const DAY = 86_400_000;
  const W = [0, 30, 60, 90, 110].map((days) => Date.parse('2026-09-01T00:00:00Z') + days * DAY);
  const gp1 = [0, 1, 2, 3, 4].map((i) =>
    priceRecord({
      amount: `0.0${i + 1}`,
      validFrom: W[i],
      validUntil: i < 4 ? W[i + 1] : null,
      recordedAt: W[i],
    }),
  );
  const present = presentCut(W, NOW.getTime())!;
  const first = gp1.filter((record) => record.validUntil === null || record.validUntil >= present.cut);

  it('answers from the present alone only what it holds: lookups before it unavailable, /at before it waits for the past', async () => {
    let readPast!: () => void;
    const past = new Promise<void>((resolve) => (readPast = resolve));
    const repository = {
      ...readsOf(() =>
        Promise.resolve(pricingData(first, { listOnly: true, listWrites: W, present, readAt: NOW.getTime() })),
      ),
      loadPastAndOrganizationPrices: async () => {
        await past;
        return { records: [...gp1.filter((record) => !first.includes(record)), AGREED], ends: new Map() };
      },
    };
    const clock = new ManualClock(NOW);
    const prices = await pricesInMemory(repository, clock);
    const answers = new PastAnswers(prices.state, pastOptions({}), clock, prices.loader);
    const service = new PricingService(prices.state, prices.loader, answers, clock);
    try {
      const checked = prices.loader.check();
      await until(() => prices.state.current() !== undefined);
      expect(first.length).toBeLessThan(gp1.length);
      // From the second latest write on: what the whole book gives.
      expect(service.priceAt('storage.gp1')).toMatchObject({ found: true, price: { amount: '0.05' } });
      expect(service.priceAt('storage.gp1', { at: new Date(W[3]) })).toMatchObject({ price: { amount: '0.04' } });
      expect(() => service.assertOrderable('storage.gp1')).not.toThrow();
      expect(service.isOnSale('storage.gp1')).toBe(true);
      // Before it, and usage over any period (the book as a whole): not known yet.
      for (const lookup of [
        () => service.priceAt('storage.gp1', { at: new Date(W[3] - 1) }),
        () => service.priceAt('storage.gp1', { asRecordedAt: new Date(W[2]) }),
        () => service.priceList(new Date(W[0])),
        () => service.costOfUsage('storage.gp1', { from: new Date(W[4]), to: NOW, sizeGib: '1' }),
      ])
        expect(lookup).toThrow(PricingUnavailableError);
      const before = service.priceListAsOf(new Date(W[0] + DAY));
      let answered = false;
      void before.then(() => (answered = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(answered).toBe(false); // waits for the past

      readPast();
      await checked;
      expect((await before).document.families[0].prices[0].amount).toBe('0.01');
      expect(service.priceAt('storage.gp1', { at: new Date(W[0]) })).toMatchObject({ price: { amount: '0.01' } });
      expect(service.priceAt('storage.gp1', { organizationId: 'org_42' })).toMatchObject({
        price: { amount: '0.0400' },
      });
    } finally {
      prices.close();
    }
  });
});
