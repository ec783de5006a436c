import type { EndTable } from '../core/end-table';
import type { KnownEnd, ListWrite } from '../core/list-history';
import type { PriceRecord } from '../core/price-record';

// What PriceSnapshotReads reads for the prices held in memory (snapshot/pricing-snapshot.ts).

/**
 * Where the price book stands, cheap to poll: its version and the latest entry of its change log.
 * Prices read at the same version, entry id and instant are the ones stored; any other head means
 * a write, or a restore (a restore that lost writes, then as many new ones, comes back to the same
 * version, and even to the same entry ids, but not to the same instants).
 */
export interface PriceBookHead {
  readonly version: string;
  /** The latest entry of the change log ('0' when none): the next reload starts after it. */
  readonly lastChangeId: string;
  /** Its instant (epoch ms; `null` when none). */
  readonly lastChangedAt: number | null;
}

/**
 * A head as read, with the database's clock then (epoch ms) and its publication margin: every write
 * not committed when it was read takes effect at least that margin later (docs/decisions.md, "One
 * clock"), so what an instance holds at this head is final until then.
 */
export interface ReadHead extends PriceBookHead {
  readonly readAt: number;
  readonly marginMs: number;
}

/** Prices as read from the database, with the ends each had before (core/as-recorded.ts). */
export interface RecordsRead {
  readonly records: readonly PriceRecord[];
  /**
   * The ends of each of `records` whose end ever changed, oldest first (ListSources.ends): a table
   * as read (core/end-table.ts), a Map in the tests' fixtures.
   */
  readonly ends: EndTable | ReadonlyMap<number, readonly KnownEnd[]>;
}

/** Everything the pricing library serves, as read from the database in one transaction. */
export interface PricingData extends ReadHead, RecordsRead {
  /** Every list price (ended ones too), and, unless `listOnly`, every organization's price. */
  readonly records: readonly PriceRecord[];
  /** The publication instants (epoch ms) of list-price writes (set, end, withdrawal): `last_changed`. */
  readonly listWrites: readonly number[];
  readonly availability: ReadonlyMap<string, boolean>;
  /** `true` when organizations' prices were left out (`records` holds list prices only). */
  readonly listOnly?: boolean;
  /**
   * Set when the list's past was left out too (PriceSnapshotReads.loadPricingData): `records` holds
   * the list prices whose listing may reach `cut` or later, which give the list at `heldFrom` and
   * after exactly; loadPastAndOrganizationPrices(cut) reads the rest.
   */
  readonly present?: { readonly cut: number; readonly heldFrom: number };
}

/**
 * What was written after a change-log entry, read in one transaction (loadChangesSince):
 * `records` are every record of the product keys written since, in every scope, and `listLog` the
 * change-log entries of list prices since, in the log's order.
 */
export interface PricingChanges extends ReadHead, RecordsRead {
  readonly sinceChangeId: string;
  /**
   * The instant of the entry `sinceChangeId` as the database has it now (`null` when it has none):
   * these changes follow prices read up to that entry only if it is the entry they read (a restore
   * may have lost it, or given its id to another).
   */
  readonly sinceChangedAt: number | null;
  /** Every product key written since, in any scope. */
  readonly productKeys: readonly string[];
  readonly listLog: readonly ListWrite[];
  readonly availability: ReadonlyMap<string, boolean>;
  /** Write transactions since (distinct instants in the change log): each moved the version by one. */
  readonly writeCount: number;
  /** Price records in the database now, all keys: what the updated snapshot must hold. */
  readonly recordCount: number;
}
