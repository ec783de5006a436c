// Usage pricing, the pure core: the cost of time-based usage over an interval and of
// metered events, split at every change of the price that applies. No I/O and no clock: the
// caller passes the price records of one product key (from the snapshot in memory) and the usage.
//
// Which price applies at an instant t: the organization's agreed price in force at t, else the
// list price in force at t (in force: `validFrom <= t < validUntil`), else none. Where none
// applies, the usage is returned as an explicit unpriced line (cost `null`, never zero) and the
// result says it is incomplete.
//
// The one rounding rule, the rule of `costOf` (quote.ts): each line's cost is the exact rational
//     amount × quantity / unit_count
// with the quantity taken exactly from milliseconds (seconds = ms / 1,000; GiB-hours =
// size × ms / 3,600,000) or as the exact sum of the events' quantities, rounded once, half-even,
// to COST_DECIMAL_PLACES (20) places, as a plain decimal string (trailing zeros dropped, never in
// exponent form). The total is the exact sum of the rounded line costs, not rounded again: it may
// differ from rounding the whole usage at once by up to half a unit in the 20th place per line.
// A line's quantity is shown exactly, except GiB-hours, which need not terminate in decimal
// (3,600,000 has a factor 9): they are shown rounded the same way, and the cost is computed from
// the exact value, never from the rounded one.
//
// Adding costs: they are decimal strings with up to 20 places, and decimal.js's default precision
// (20 significant digits) silently rounds their sums. Add them with `sumCosts` (exact, any size),
// or with the `Exact` decimal constructor of quote.ts (exact while a sum stays below 10^100).
//
// Invoicing is the one rounding to cents (`roundForInvoice`): each priced line to the cent, half
// up, and the invoice's total the sum of the rounded lines (docs/decisions.md, "Rounding an invoice").
//
// The arithmetic is on integers scaled by powers of ten (BigInt): exact whatever the number of
// digits, with one integer division per rounding. (decimal.js would round the division to its
// precision first, then to 20 places, and is slower: docs/benchmarks.md, "Usage pricing".)
import type { UnitType } from '../catalogue/catalogue';
import { quoteValue } from '../errors/bounded-text';
import { InvalidUsageError, PricingError, PricingErrorCode } from '../errors/pricing-error';
import { byValidFrom, nextEdgeAfter, priceInForceAt, type PriceRecord } from './price-record';
import { COST_DECIMAL_PLACES, PLAIN_DECIMAL, plainQuantity, type Quantity } from './quote';

/**
 * The prices of one product key that may apply to the usage, each sorted by `validFrom`: the list
 * prices, and the prices agreed with the organization the usage belongs to (empty when none, or
 * when the usage is priced at list prices). Prices of one scope never overlap in time (the
 * database refuses it), so the one in force at an instant is found by bisection (priceInForceAt, price-record.ts).
 */
export interface ApplicablePrices {
  readonly list: readonly PriceRecord[];
  readonly organization: readonly PriceRecord[];
}

/**
 * The applicable prices of one product key and organization (`null`: list prices only) among
 * `records` (any keys and scopes, in any order), indexed once: for a caller that read records
 * itself (the CLI's `focus`), where the prices in memory index them (pricing-snapshot.ts).
 */
export function applicablePricesIn(
  records: readonly PriceRecord[],
): (productKey: string, organizationId: string | null) => ApplicablePrices {
  const byScope = new Map<string, PriceRecord[]>();
  for (const record of records) {
    const scope = JSON.stringify([record.productKey, record.organizationId]);
    const scoped = byScope.get(scope);
    if (scoped) scoped.push(record);
    else byScope.set(scope, [record]);
  }
  for (const scoped of byScope.values()) scoped.sort(byValidFrom);
  const of = (productKey: string, organizationId: string | null): readonly PriceRecord[] =>
    byScope.get(JSON.stringify([productKey, organizationId])) ?? [];
  return (productKey, organizationId) => ({
    list: of(productKey, null),
    organization: organizationId === null ? [] : of(productKey, organizationId),
  });
}

/** Time-based usage over `[from, to)`, to the millisecond. */
export interface TimeUsage {
  readonly from: Date;
  readonly to: Date;
  /** Size in GiB: required for `gib_hours`, refused for `seconds`. A non-negative decimal string or a bigint. */
  readonly sizeGib?: Quantity;
}

/**
 * One metered event: exactly one of `quantity` (in the family's unit) and `bytes`. `bytes` is
 * accepted for `gb` only, as a whole number of bytes, converted exactly: GB = bytes / 10^9
 * (decimal gigabytes, section 2.4).
 */
export interface MeteredEvent {
  readonly at: Date;
  readonly quantity?: Quantity;
  readonly bytes?: Quantity;
}

interface UsageLineWindow {
  /** Start of the window, inclusive. */
  readonly from: Date;
  /** End of the window, exclusive. */
  readonly to: Date;
  /** Quantity in the family's unit, a plain decimal string (GiB-hours rounded to 20 places). */
  readonly quantity: string;
}

/** A window priced at one price: the organization's agreed price (`organizationId` set) or the list price. */
export interface PricedUsageLine extends UsageLineWindow {
  readonly priced: true;
  readonly price: PriceRecord;
  /** EUR, `amount × quantity / unit_count` rounded once, half-even, to 20 places. */
  readonly cost: string;
}

/** A window in which no price applied: its quantity is known, its cost is not (never zero). */
export interface UnpricedUsageLine extends UsageLineWindow {
  readonly priced: false;
  readonly price: null;
  readonly cost: null;
}

export type UsageLine = PricedUsageLine | UnpricedUsageLine;

export interface UsageCost {
  /** In time order; windows do not overlap. */
  readonly lines: readonly UsageLine[];
  /** EUR, the exact sum of the priced lines' costs. Short of the true cost when `complete` is false. */
  readonly total: string;
  /** False when any line is unpriced. */
  readonly complete: boolean;
}

/** Milliseconds in one unit of a time-based family: a second; an hour (of one GiB). */
const MS_PER_UNIT = { seconds: 1_000n, gib_hours: 3_600_000n } as const;
type TimeUnitType = keyof typeof MS_PER_UNIT;
const METERED_UNIT_TYPES: readonly UnitType[] = ['gb', 'requests', 'samples', 'metric_months'];
/** Bytes are whole; a gigabyte is 10^9 of them. */
const GB_SCALE = 9;

/**
 * The cost of time-based usage (`seconds`, `gib_hours`) over `[from, to)`: one line per window
 * in which one price applied, or none, split at every `validFrom` and `validUntil` inside the
 * interval. A zero-length interval has no lines. Throws `InvalidUsageError` for an invalid date,
 * `from > to`, a metered unit type, a size missing (`gib_hours`) or given (`seconds`), or a size
 * that is not a non-negative decimal.
 */
export function costOfUsage(prices: ApplicablePrices, unitType: UnitType, usage: TimeUsage): UsageCost {
  if (!isTimeUnit(unitType)) {
    throw new InvalidUsageError(`${unitType} is a metered unit: price its events with costOfEvents`, 'unitType');
  }
  const fromMs = instant(usage.from, 'from');
  const toMs = instant(usage.to, 'to');
  if (fromMs > toMs) {
    const [from, to] = [usage.from.toISOString(), usage.to.toISOString()];
    throw new InvalidUsageError(`usage ends before it starts: from ${from} is after to ${to}`, 'to', { from, to });
  }
  const size = sizeOf(unitType, usage.sizeGib);
  const msPerUnit = MS_PER_UNIT[unitType];
  const tally = new Tally(unitType);
  for (const window of windows(prices, fromMs, toMs)) {
    // size × ms, at the scale of the size: the quantity times the milliseconds of one unit.
    const used = { digits: size.digits * BigInt(window.to - window.from), scale: size.scale };
    tally.add(window, formatScaled(roundedQuotient(used, msPerUnit), COST_DECIMAL_PLACES), used, msPerUnit);
  }
  return tally.result();
}

/**
 * The cost of metered events (`gb`, `requests`, `samples`, `metric_months`): each event is priced
 * at its instant, and the events are summed per window in which one price applied (or none: the
 * unpriced events of a gap form one line). A line's window is that window clipped to the events'
 * span, `[first event, last event + 1 ms)`; windows without events have no line. Events may be in
 * any order. Throws `InvalidUsageError` for a time-based unit type, an invalid `at`, an event
 * without exactly one of `quantity` and `bytes`, `bytes` outside `gb`, a quantity that is not a
 * non-negative decimal or a byte count that is not a whole non-negative number.
 */
export function costOfEvents(prices: ApplicablePrices, unitType: UnitType, events: readonly MeteredEvent[]): UsageCost {
  if (!METERED_UNIT_TYPES.includes(unitType)) {
    throw new InvalidUsageError(`${unitType} is a time-based unit: price the usage with costOfUsage`, 'unitType');
  }
  const tally = new Tally(unitType);
  if (events.length === 0) return tally.result();
  let first = Infinity;
  let last = -Infinity;
  events.forEach((event, index) => {
    const at = instant(event?.at, `events[${index}].at`);
    if (at < first) first = at;
    if (at > last) last = at;
  });
  const spans = windows(prices, first, last + 1);
  const sums = spans.map(() => ({ digits: 0n, scale: 0, events: 0 }));
  events.forEach((event, index) => {
    const sum = sums[windowAt(spans, event.at.getTime())];
    addScaled(sum, eventQuantity(event, index, unitType));
    sum.events++;
  });
  spans.forEach((window, i) => {
    const sum = sums[i];
    if (sum.events > 0) tally.add(window, formatScaled(sum.digits, sum.scale), sum, 1n);
  });
  return tally.result();
}

/**
 * The exact sum of costs (plain non-negative decimal strings, as this module returns them; anything
 * else throws), whatever their number and size, as a plain decimal string with trailing zeros
 * dropped: `sumCosts(['0.10', '0.20'])` is `'0.3'`, `sumCosts(['1.5', '2.5'])` is `'4'`. It never
 * rounds. For an invoice, round each line with `roundForInvoice`, then add the rounded lines with
 * it: docs/using-pricing.md, "Rounding an invoice".
 */
export function sumCosts(costs: readonly string[]): string {
  const sum = { digits: 0n, scale: 0 };
  for (const cost of costs) {
    checkCost(cost);
    addScaled(sum, parseScaled(cost));
  }
  return formatScaled(sum.digits, sum.scale);
}

/** Decimal places of the currency's minor unit on an invoice: EUR, cents. */
const INVOICE_DECIMAL_PLACES = 2;

/**
 * The amount of one invoice line: `cost` (a priced usage line's or a quote's cost, a plain
 * non-negative decimal string; anything else throws) rounded to the cent, half away from zero
 * (half up: costs are never negative), always with two decimals: `'3.15616'` is `'3.16'`, `'2'` is
 * `'2.00'`, `'0.005'` is `'0.01'`. One invoice line per priced usage line (one unit price per
 * line); the invoice's total is the sum of its rounded lines (`sumCosts`), never a usage's
 * `total` rounded: docs/using-pricing.md, "Rounding an invoice".
 */
export function roundForInvoice(cost: string): string {
  checkCost(cost);
  const { digits, scale } = parseScaled(cost);
  let cents: bigint;
  if (scale <= INVOICE_DECIMAL_PLACES) {
    cents = digits * powerOfTen(INVOICE_DECIMAL_PLACES - scale);
  } else {
    const cent = powerOfTen(scale - INVOICE_DECIMAL_PLACES);
    cents = digits / cent + ((digits % cent) * 2n >= cent ? 1n : 0n);
  }
  const text = cents.toString().padStart(INVOICE_DECIMAL_PLACES + 1, '0');
  return `${text.slice(0, -INVOICE_DECIMAL_PLACES)}.${text.slice(-INVOICE_DECIMAL_PLACES)}`;
}

/**
 * Throws INVALID_COST unless `cost` is a plain non-negative decimal string; `details.cost` says
 * what was given, quoted and cut (bounded-text.ts): untyped callers may pass a float or an object.
 */
function checkCost(cost: unknown): asserts cost is string {
  if (typeof cost === 'string' && PLAIN_DECIMAL.test(cost)) return;
  const given =
    typeof cost === 'string'
      ? quoteValue(cost)
      : typeof cost === 'number' || typeof cost === 'bigint'
        ? `the ${typeof cost} ${String(cost)}`
        : `a value of type ${cost === null ? 'null' : typeof cost}`;
  throw new PricingError(PricingErrorCode.InvalidCost, `not a plain non-negative decimal cost: ${given}`, {
    cost: given,
  });
}

/** A window `[from, to)` in epoch milliseconds and the price that applied throughout it (`null`: none). */
interface PriceWindow {
  readonly from: number;
  to: number;
  readonly price: PriceRecord | null;
}

/**
 * The instants inside `(fromMs, toMs)` at which the price that applies changes, as costOfUsage
 * splits usage (a list price changing while the organization's applies is no change): none when
 * one price, or none, applies throughout.
 */
export function priceChangesWithin(prices: ApplicablePrices, fromMs: number, toMs: number): number[] {
  return windows(prices, fromMs, toMs)
    .slice(1)
    .map((window) => window.from);
}

/** `[fromMs, toMs)` split where the applicable price changes, adjacent windows of one price merged. */
function windows(prices: ApplicablePrices, fromMs: number, toMs: number): PriceWindow[] {
  const result: PriceWindow[] = [];
  for (let t = fromMs; t < toMs;) {
    const price = priceInForceAt(prices.organization, t) ?? priceInForceAt(prices.list, t) ?? null;
    const end = Math.min(nextEdgeAfter(prices.list, t), nextEdgeAfter(prices.organization, t), toMs);
    const previous = result.at(-1);
    // A list price changing while the organization's price applies is no change of price.
    if (previous?.price === price) previous.to = end;
    else result.push({ from: t, to: end, price });
    t = end;
  }
  return result;
}

/** The index of the window holding `t` (windows are contiguous and in order; `t` lies in one of them). */
function windowAt(spans: readonly PriceWindow[], t: number): number {
  let low = 0;
  let high = spans.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (spans[middle].from <= t) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** Collects the lines of one result and their exact total (in units of 10^-20 EUR). */
class Tally {
  private readonly lines: UsageLine[] = [];
  private total = 0n;
  private complete = true;

  constructor(private readonly unitType: UnitType) {}

  /**
   * Adds the line of one window. `used` is the quantity times `divisor`, exactly: its cost is
   * `amount × used / (divisor × unit_count)`.
   */
  add(window: PriceWindow, quantity: string, used: Scaled, divisor: bigint): void {
    const from = new Date(window.from);
    const to = new Date(window.to);
    const price = window.price;
    if (price === null) {
      this.complete = false;
      this.lines.push({ priced: false, from, to, price: null, quantity, cost: null });
      return;
    }
    if (price.unitType !== this.unitType) {
      throw new Error(`price ${price.id} of ${price.productKey} is per ${price.unitType}, not ${this.unitType}`);
    }
    if (!PLAIN_DECIMAL.test(price.amount)) throw new Error(`not a decimal amount: ${price.amount}`);
    const amount = parseScaled(price.amount);
    const cost = roundedQuotient(
      { digits: amount.digits * used.digits, scale: amount.scale + used.scale },
      divisor * BigInt(price.unitCount),
    );
    this.total += cost;
    this.lines.push({ priced: true, from, to, price, quantity, cost: formatScaled(cost, COST_DECIMAL_PLACES) });
  }

  result(): UsageCost {
    return { lines: this.lines, total: formatScaled(this.total, COST_DECIMAL_PLACES), complete: this.complete };
  }
}

/** A non-negative decimal as `digits × 10^-scale`. */
interface Scaled {
  digits: bigint;
  scale: number;
}

const POWERS_OF_TEN: bigint[] = [1n];
function powerOfTen(exponent: number): bigint {
  for (let i = POWERS_OF_TEN.length; i <= exponent; i++) POWERS_OF_TEN.push(POWERS_OF_TEN[i - 1] * 10n);
  return POWERS_OF_TEN[exponent];
}

/** A plain decimal (already checked against PLAIN_DECIMAL), exactly. */
function parseScaled(text: string, extraScale = 0): Scaled {
  const dot = text.indexOf('.');
  if (dot < 0) return { digits: BigInt(text), scale: extraScale };
  return { digits: BigInt(text.slice(0, dot) + text.slice(dot + 1)), scale: text.length - dot - 1 + extraScale };
}

/** `sum += term`, exactly, at the larger of the two scales. */
function addScaled(sum: Scaled, term: Scaled): void {
  if (term.scale > sum.scale) {
    sum.digits *= powerOfTen(term.scale - sum.scale);
    sum.scale = term.scale;
  }
  sum.digits += term.digits * powerOfTen(sum.scale - term.scale);
}

/** `value / divisor` rounded once, half-even, to COST_DECIMAL_PLACES places, in units of 10^-20. */
function roundedQuotient(value: Scaled, divisor: bigint): bigint {
  let numerator = value.digits;
  let denominator = divisor;
  if (value.scale <= COST_DECIMAL_PLACES) numerator *= powerOfTen(COST_DECIMAL_PLACES - value.scale);
  else denominator *= powerOfTen(value.scale - COST_DECIMAL_PLACES);
  const quotient = numerator / denominator;
  const twiceRemainder = (numerator % denominator) * 2n;
  const roundUp = twiceRemainder > denominator || (twiceRemainder === denominator && quotient % 2n === 1n);
  return roundUp ? quotient + 1n : quotient;
}

/** `digits × 10^-scale` as a plain decimal string: trailing zeros of the fraction dropped, never exponent form. */
function formatScaled(digits: bigint, scale: number): string {
  const text = digits.toString();
  if (scale === 0) return text;
  const padded = text.length > scale ? text : '0'.repeat(scale - text.length + 1) + text;
  let end = padded.length;
  while (end > padded.length - scale && padded.charCodeAt(end - 1) === 48 /* 0 */) end--;
  const point = padded.length - scale;
  return end === point ? padded.slice(0, point) : `${padded.slice(0, point)}.${padded.slice(point, end)}`;
}

function isTimeUnit(unitType: UnitType): unitType is TimeUnitType {
  return Object.hasOwn(MS_PER_UNIT, unitType);
}

function instant(value: unknown, field: string): number {
  const ms = value instanceof Date ? value.getTime() : NaN;
  if (Number.isNaN(ms)) throw new InvalidUsageError(`${field} is not a valid Date`, field);
  return ms;
}

function sizeOf(unitType: TimeUnitType, sizeGib: Quantity | undefined): Scaled {
  if (unitType === 'seconds') {
    if (sizeGib !== undefined)
      throw new InvalidUsageError('seconds are priced without a size: sizeGib must be absent', 'sizeGib');
    return { digits: 1n, scale: 0 };
  }
  if (sizeGib === undefined) throw new InvalidUsageError('gib_hours need sizeGib, the size in GiB', 'sizeGib');
  return parseScaled(quantityText(sizeGib, 'sizeGib'));
}

function eventQuantity({ quantity, bytes }: MeteredEvent, index: number, unitType: UnitType): Scaled {
  if (bytes === undefined) {
    if (quantity === undefined)
      throw new InvalidUsageError(`events[${index}] has neither quantity nor bytes`, `events[${index}]`);
    return parseScaled(quantityText(quantity, `events[${index}].quantity`));
  }
  const field = `events[${index}].bytes`;
  if (quantity !== undefined)
    throw new InvalidUsageError(`events[${index}] has both quantity and bytes: give one`, field);
  if (unitType !== 'gb')
    throw new InvalidUsageError(`${field}: bytes are accepted for gb only, not ${unitType}`, field);
  const text = quantityText(bytes, field);
  if (text.includes('.')) throw invalidQuantity(field, text, 'not a whole number of bytes');
  return parseScaled(text, GB_SCALE);
}

function quantityText(quantity: Quantity, field: string): string {
  const text = plainQuantity(quantity);
  if (text === undefined) throw invalidQuantity(field, String(quantity), 'not a non-negative decimal');
  return text;
}

function invalidQuantity(field: string, text: string, why: string): InvalidUsageError {
  return new InvalidUsageError(`${field} is ${why}: ${text}`, field, { quantity: text });
}
