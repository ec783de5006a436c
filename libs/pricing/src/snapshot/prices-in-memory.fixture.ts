import { Test } from '@nestjs/testing';
import { Clock } from '@app/clock';
import { DatabaseConnection } from '@app/database';
import type { PriceRecord } from '../core/price-record';
import { PriceSnapshotReads } from '../database/price-snapshot-reads';
import type { PricingData } from '../database/pricing-data';
import { PRICING_OPTIONS, resolvePricingOptions } from '../options/pricing-options';
import { PriceBookLoader } from './price-book-loader';
import { PricingState } from './pricing-state';

/** The prices in memory as PricingModule wires them, for specs. */
export interface PricesInMemory {
  readonly loader: PriceBookLoader;
  readonly state: PricingState;
  close(): void;
}

/**
 * The loader and the state on a stand-in for the repository's reads, not started
 * (nothing runs until the spec calls `loader.check()`).
 */
export async function pricesInMemory(
  repository: Pick<PriceSnapshotReads, 'readHead' | 'loadPricingData'> & Partial<PriceSnapshotReads>,
  clock: Clock,
): Promise<PricesInMemory> {
  const moduleRef = await Test.createTestingModule({
    providers: [
      { provide: PRICING_OPTIONS, useValue: resolvePricingOptions({}) },
      { provide: Clock, useValue: clock },
      { provide: PriceSnapshotReads, useValue: repository },
      { provide: DatabaseConnection, useValue: {} }, // only asked for its state at bootstrap, which specs skip
      PriceBookLoader,
      PricingState,
    ],
  }).compile();
  const loader = moduleRef.get(PriceBookLoader);
  return {
    loader,
    state: moduleRef.get(PricingState),
    close: () => loader.onApplicationShutdown(),
  };
}

/** What a stand-in's `loadPricingData` answers: `records`, at version 2 up to change 3. */
export function pricingData(records: readonly PriceRecord[], more: Partial<PricingData> = {}): PricingData {
  return {
    records,
    availability: new Map(),
    ends: new Map(),
    listWrites: [],
    version: '2',
    lastChangeId: '3',
    lastChangedAt: null,
    readAt: 0,
    marginMs: 0,
    ...more,
  };
}

/** Reads on `loadPricingData` whose head stays where `pricingData` stands. */
export function readsOf(
  loadPricingData: PriceSnapshotReads['loadPricingData'],
): Pick<PriceSnapshotReads, 'readHead' | 'loadPricingData'> {
  return {
    readHead: () => Promise.resolve({ version: '2', lastChangeId: '3', lastChangedAt: null, readAt: 0, marginMs: 0 }),
    loadPricingData,
  };
}
