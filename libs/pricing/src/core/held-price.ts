import type { UnitType } from '../catalogue/catalogue';

/**
 * A price as the prices in memory hold it (snapshot/): what the public list, lookups and usage
 * pricing read, and nothing else, compactly, as a book holds up to a million of them: instants
 * as epoch milliseconds (no Date per record), product keys, organization ids, unit types and
 * amounts shared (StringPool), the amount as the string it was set with. PriceRecord is a stored
 * record as the price book's workflows read it, with its history of writes.
 */
export interface HeldPrice {
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
}

/** A price applies at `ms` when `validFrom <= ms < validUntil`. */
export function isInForceAt(price: Pick<HeldPrice, 'validFrom' | 'validUntil'>, ms: number): boolean {
  return price.validFrom <= ms && (price.validUntil === null || ms < price.validUntil);
}

/**
 * The price of `prices` (of one key and scope: they never overlap, sorted by `validFrom`) in force
 * at `ms`, found by bisection; `undefined` when none is.
 */
export function priceInForceAt<T extends Pick<HeldPrice, 'validFrom' | 'validUntil'>>(
  prices: readonly T[],
  ms: number,
): T | undefined {
  const i = lastStartingAtOrBefore(prices, ms);
  return i >= 0 && isInForceAt(prices[i], ms) ? prices[i] : undefined;
}

/**
 * The first instant after `ms` at which the price of `prices` (sorted, as for priceInForceAt) in
 * force changes: the end of the one in force, or the start of the next; Infinity when none.
 */
export function nextEdgeAfter(prices: readonly Pick<HeldPrice, 'validFrom' | 'validUntil'>[], ms: number): number {
  const i = lastStartingAtOrBefore(prices, ms);
  const next = i + 1 < prices.length ? prices[i + 1].validFrom : Infinity;
  const end = i >= 0 ? prices[i].validUntil : null;
  return end !== null && end > ms ? Math.min(end, next) : next;
}

/** Sorts prices of one key and scope by `validFrom`, as priceInForceAt and nextEdgeAfter need them. */
export function byValidFrom<T extends Pick<HeldPrice, 'validFrom'>>(a: T, b: T): number {
  return a.validFrom - b.validFrom;
}

/** The index of the last price starting at or before `ms`; -1 when none does. */
function lastStartingAtOrBefore(prices: readonly Pick<HeldPrice, 'validFrom'>[], ms: number): number {
  let low = 0;
  let high = prices.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (prices[middle].validFrom <= ms) low = middle + 1;
    else high = middle;
  }
  return low - 1;
}

/**
 * One instance of each distinct string: product keys, organization ids, unit types and amounts
 * repeat across a book's records, and each row read brings its own copy. Grows with the distinct
 * values, never shrinks.
 */
export class StringPool {
  private readonly strings = new Map<string, string>();

  intern<T extends string | null>(text: T): T {
    if (text === null) return text;
    const held = this.strings.get(text);
    if (held !== undefined) return held as T;
    this.strings.set(text, text);
    return text;
  }
}
