import type { PriceRecord } from '../core/price-record';
import type { LoggedEffect } from '../price-book/change-log-chain';
import type { PriceChangeKind } from '../price-book/format-history';

// What PriceSnapshotReads reads for the prices held in memory (snapshot/pricing-snapshot.ts).

/** Everything the pricing library serves, as read from the database in one transaction. */
export interface PricingData {
  readonly records: readonly PriceRecord[];
  readonly availability: ReadonlyMap<string, boolean>;
  /** Instants (epoch ms) of list-price writes (set, end, withdrawal), for `last_changed`. */
  readonly listWrites: readonly number[];
  /**
   * The change log's rows of list prices (`organization_id` null, availability left out), in id
   * order, each with what its write did: the public list's past.
   */
  readonly listLog: readonly ListLogEntry[];
  readonly version: string;
  /** The latest entry of the change log read ('0' when none): the next reload starts after it. */
  readonly lastChangeId: string;
  /** `true` when organizations' prices were left out (`records` holds list prices only). */
  readonly listOnly?: boolean;
}

/**
 * What was written after a change-log entry, read in one transaction (loadChangesSince):
 * `records` are every record of the product keys written since, in every scope, and
 * `listWrites` and `listLog` the list-price writes since.
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

/** A row of the change log of a list price, as the prices in memory read it (`listLog`). */
export interface ListLogEntry {
  /** `changed_at`, epoch milliseconds. */
  readonly at: number;
  readonly change: PriceChangeKind;
  readonly productKey: string;
  readonly recordId: number | null;
  /** What the write did (change-log-chain.ts); `null` when the row holds nothing of the log's form. */
  readonly effect: LoggedEffect | null;
}
