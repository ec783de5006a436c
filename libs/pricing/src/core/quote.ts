import Decimal from 'decimal.js';
import type { PriceRecord } from './price-record';

/**
 * Exact decimal arithmetic for costs. Amounts have at most 40 characters and quantities at
 * most 60 digits, so `amount × quantity` never needs more than 100 significant digits: the
 * product is exact. The one rounding is the final division by `unit_count`.
 *
 * Exported for consumers that compute with costs: its 120 significant digits add costs (up to
 * 20 places) exactly while the sum stays below 10^100, where decimal.js's default of 20
 * significant digits silently rounds. `sumCosts` (usage.ts) adds any number of costs exactly.
 */
export const Exact = Decimal.clone({
  precision: 120,
  rounding: Decimal.ROUND_HALF_EVEN,
  toExpNeg: -200,
  toExpPos: 200,
});
/** Decimal places of a cost; the division by `unit_count` is rounded half-even to them. */
export const COST_DECIMAL_PLACES = 20;
/** Digits with an optional fraction: no sign, no exponent, no leading zeros (amounts, quantities). */
export const PLAIN_DECIMAL = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;
const MAX_QUANTITY_DIGITS = 60;
/** The least bigint with more than MAX_QUANTITY_DIGITS digits. */
const TOO_LARGE_BIGINT = 10n ** BigInt(MAX_QUANTITY_DIGITS);

/** A quantity in the family's unit: a non-negative decimal string, or a bigint. */
export type Quantity = string | bigint;

export function parseQuantity(quantity: Quantity): Decimal | undefined {
  const text = plainQuantity(quantity);
  return text === undefined ? undefined : new Exact(text);
}

/** A quantity as plain decimal text (bigints in decimal), or `undefined` when `parseQuantity` would refuse it. */
export function plainQuantity(quantity: Quantity): string | undefined {
  // Untyped callers may pass a float: it is refused, as is anything but a string or a bigint.
  // A bigint is measured before it is written out: toString grows faster than its digits
  // (quote.properties.spec.ts), and a refused one need not be written at all.
  if (typeof quantity === 'bigint' && (quantity < 0n || quantity >= TOO_LARGE_BIGINT)) return undefined;
  const text: unknown = typeof quantity === 'bigint' ? quantity.toString() : quantity;
  if (typeof text !== 'string' || !PLAIN_DECIMAL.test(text) || text.replace('.', '').length > MAX_QUANTITY_DIGITS)
    return undefined;
  return text;
}

/**
 * The cost in EUR of `quantity` units at `price`: `amount × quantity / unit_count`, as a plain
 * decimal string (never exponent form), rounded once, half-even, to 20 decimal places, with
 * trailing zeros removed.
 */
export function costOf(price: Pick<PriceRecord, 'amount' | 'unitCount'>, quantity: Decimal): string {
  if (!PLAIN_DECIMAL.test(price.amount)) throw new Error(`not a decimal amount: ${price.amount}`);
  const cost = new Exact(price.amount)
    .times(quantity)
    .dividedBy(price.unitCount)
    .toDecimalPlaces(COST_DECIMAL_PLACES, Decimal.ROUND_HALF_EVEN);
  return cost.toFixed();
}
