import type { UnitType } from '../catalogue/catalogue';
import { firstIndexWhere } from './bisect';

/**
 * One stored price: a list price (`organizationId` null) or one organization's agreed price. The
 * one shape of a price inside the library: the database's rows become it when read, and it becomes
 * the public document's entries and PricingService's answers when it leaves. Instants are epoch
 * milliseconds (a book holds up to a million records: no Date per record); the amount is the
 * decimal string it was set with, never a float.
 */
export interface PriceRecord {
  readonly id: number;
  readonly productKey: string;
  /** `null` for a list price. */
  readonly organizationId: string | null;
  readonly unitType: UnitType;
  readonly unitCount: number;
  /** Decimal string with the digits it was set with; never a float. */
  readonly amount: string;
  /** Epoch milliseconds, inclusive. */
  readonly validFrom: number;
  /** Epoch milliseconds, exclusive; `null` when no end is scheduled. */
  readonly validUntil: number | null;
  /**
   * Epoch milliseconds: when the record was written, its write's publication instant (docs/decisions.md,
   * "One clock"): the book as recorded at an instant (as-recorded.ts) and the list's past
   * (list-history.ts) read it. Absent only in fixtures, which count as recorded before anything.
   */
  readonly recordedAt?: number;
  /** The scheduled price that set `validUntil`, when one did. */
  readonly supersededBy: number | null;
}

/** The one in-force rule: a price applies at `ms` when `validFrom <= ms < validUntil`. */
export function isInForce(price: Pick<PriceRecord, 'validFrom' | 'validUntil'>, ms: number): boolean {
  return price.validFrom <= ms && (price.validUntil === null || ms < price.validUntil);
}

/**
 * The price of `prices` (of one key and scope: they never overlap, sorted by `validFrom`) in force
 * at `ms`, found by bisection; `undefined` when none is.
 */
export function priceInForceAt<T extends Pick<PriceRecord, 'validFrom' | 'validUntil'>>(
  prices: readonly T[],
  ms: number,
): T | undefined {
  const i = lastStartingAtOrBefore(prices, ms);
  return i >= 0 && isInForce(prices[i], ms) ? prices[i] : undefined;
}

/**
 * The first instant after `ms` at which the price of `prices` (sorted, as for priceInForceAt) in
 * force changes: the end of the one in force, or the start of the next; Infinity when none.
 */
export function nextEdgeAfter(prices: readonly Pick<PriceRecord, 'validFrom' | 'validUntil'>[], ms: number): number {
  const i = lastStartingAtOrBefore(prices, ms);
  const next = i + 1 < prices.length ? prices[i + 1].validFrom : Infinity;
  const end = i >= 0 ? prices[i].validUntil : null;
  return end !== null && end > ms ? Math.min(end, next) : next;
}

/** Sorts prices of one key and scope by `validFrom`, as priceInForceAt and nextEdgeAfter need them. */
export function byValidFrom<T extends Pick<PriceRecord, 'validFrom'>>(a: T, b: T): number {
  return a.validFrom - b.validFrom;
}

/** The index of the last price starting at or before `ms`; -1 when none does. */
function lastStartingAtOrBefore(prices: readonly Pick<PriceRecord, 'validFrom'>[], ms: number): number {
  return firstIndexWhere(prices, (price) => price.validFrom > ms) - 1;
}
