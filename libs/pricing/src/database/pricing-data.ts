import type { ListWrite } from '../core/list-history';
import type { PriceRecord } from '../core/price-record';

// What PriceSnapshotReads reads for the prices held in memory (snapshot/pricing-snapshot.ts).

/** Everything the pricing library serves, as read from the database in one transaction. */
export interface PricingData {
  readonly records: readonly PriceRecord[];
  readonly availability: ReadonlyMap<string, boolean>;
  /** Instants (epoch ms) of list-price writes (set, end, withdrawal), for `last_changed`. */
  readonly listWrites: readonly number[];
  /** What each write of list prices did (the change log's rows of list prices, in id order): the public list's past. */
  readonly listLog: readonly ListWrite[];
  readonly version: string;
  /** The latest entry of the change log read ('0' when none): the next reload starts after it. */
  readonly lastChangeId: string;
  /**
   * The instant of that entry (epoch ms; `null` when none). With its id, what tells it from an
   * entry that took the same id after a restore lost it (the log's ids come from a sequence, which
   * a restore takes back too).
   */
  readonly lastChangedAt: number | null;
  /** `true` when organizations' prices were left out (`records` holds list prices only). */
  readonly listOnly?: boolean;
}

/**
 * Where the price book stands, cheap to poll: its version and the latest entry of its change log.
 * Prices read at the same version, entry id and instant are the ones stored; any other head means
 * a write, or a restore (a restore that lost writes, then as many new ones, comes back to the same
 * version, and even to the same entry ids, but not to the same instants).
 */
export type PriceBookHead = Pick<PricingData, 'version' | 'lastChangeId' | 'lastChangedAt'>;

/**
 * What was written after a change-log entry, read in one transaction (loadChangesSince):
 * `records` are every record of the product keys written since, in every scope, and
 * `listWrites` and `listLog` the list-price writes since.
 */
export interface PricingChanges extends PricingData {
  readonly sinceChangeId: string;
  /**
   * The instant of the entry `sinceChangeId` as the database has it now (`null` when it has none):
   * these changes follow prices read up to that entry only if it is the entry they read (a restore
   * may have lost it, or given its id to another).
   */
  readonly sinceChangedAt: number | null;
  /** Every product key written since, in any scope. */
  readonly productKeys: readonly string[];
  /** Write transactions since (distinct instants in the change log): each moved the version by one. */
  readonly writeCount: number;
  /** Price records in the database now, all keys: what the updated snapshot must hold. */
  readonly recordCount: number;
}
