import type { Clock } from '@app/clock';
import type { DatabaseConnection } from '@app/database';
import type { PriceBookRepository } from '../database/price-book.repository';
import { resolvePricingOptions, type PricingModuleOptions } from '../options/pricing-options';
import { PriceBookLoader } from './price-book-loader';
import { PriceListRenderer } from './price-list-renderer';
import { PriceListSchedule } from './price-list-schedule';
import { PricingState } from './pricing-state';

/** The prices in memory as PricingModule wires them, on a stand-in repository, for specs. */
export interface PricesInMemoryFixture {
  readonly loader: PriceBookLoader;
  readonly schedule: PriceListSchedule;
  readonly state: PricingState;
  close(): Promise<void>;
}

export function pricesInMemory(
  repository: Partial<PriceBookRepository>,
  clock: Clock,
  options: PricingModuleOptions = {},
  renderer = new PriceListRenderer(),
): PricesInMemoryFixture {
  const resolved = resolvePricingOptions(options);
  const schedule = new PriceListSchedule(renderer, clock);
  const database = {} as DatabaseConnection; // only asked for its state at bootstrap, which specs skip
  const loader = new PriceBookLoader(resolved, repository as PriceBookRepository, database, schedule, clock);
  const state = new PricingState(resolved, loader, schedule, clock);
  return {
    loader,
    schedule,
    state,
    async close() {
      loader.onApplicationShutdown();
      await schedule.onApplicationShutdown();
    },
  };
}
