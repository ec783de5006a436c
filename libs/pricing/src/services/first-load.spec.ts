import { ManualClock } from '@app/clock';
import type { PricingData } from '../database/pricing-data';
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
