import type { ListWrite } from '../core/list-history';
import type { PriceRecord } from '../core/price-record';

// What PriceSnapshotReads reads for the prices held in memory (snapshot/pricing-snapshot.ts).

/** Everything the pricing library serves, as read from the database in one transaction. */
export interface PricingData {
  readonly records: readonly PriceRecord[];
  readonly availability: ReadonlyMap<string, boolean>;
  /** Instants (epoch ms) of list-price writes (set, end, withdrawal), for `last_changed`. */
  readonly listWrites: readonly number[];
  /** What each write of list prices did (the change log, in its order): the public list's past. */
  readonly listLog?: readonly ListWrite[];
  readonly version: string;
  /** The latest entry of the change log read ('0' when none): the next reload starts after it. */
  readonly lastChangeId: string;
  /** `true` when organizations' prices were left out (`records` holds list prices only). */
  readonly listOnly?: boolean;
}

/**
 * What was written after a change-log entry, read in one transaction (loadChangesSince):
 * `records` are every record of the product keys written since, in every scope, and
 * `listWrites` the list-price writes since.
 */
export interface PricingChanges extends PricingData {
  readonly sinceChangeId: string;
  /** Every product key written since, in any scope. */
  readonly productKeys: readonly string[];
  /** Write transactions since (distinct instants in the change log): each moved the version by one. */
  readonly writeCount: number;
  /** Price records in the database now, all keys: what the updated snapshot must hold. */
  readonly recordCount: number;
}
