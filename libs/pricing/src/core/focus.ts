// FOCUS 1.2 cost rows (the FinOps Open Cost and Usage Specification) from usage priced as
// costOfUsage and costOfEvents price it (usage.ts): the rules and the sample are in
// docs/using-pricing.md, "FOCUS cost rows". The pure core: no clock, no I/O.
//
// One row per window in which one applicable price (the organization's agreed price, else the
// list price) and one list price applied: usage.ts splits usage where the applicable price
// changes; a row also ends where the list price changes under an organization's price, as a row
// has one ListUnitPrice. Every figure reuses usage.ts's arithmetic and its one rounding (exact
// rationals, half-even to 20 places):
//   ContractedCost = BilledCost = EffectiveCost: the cost of the row's usage at the applicable price,
//     as costOfUsage gives it (pay-as-you-go: nothing amortized, no commitment);
//   ListCost: the cost of the same usage at the list price in force;
//   PricingUnit: the applicable price's `unit_count` and `unit_type`, ContractedUnitPrice its
//     amount as set, ListUnitPrice the list price per that unit (its amount as set when the units
//     agree, as they do unless a price book gives a product two units);
//   PricingQuantity: the quantity in pricing units, quantity / unit_count: the cost of the usage at
//     a price of 1 per pricing unit, so the same exact arithmetic and the same one rounding.
// So UnitPrice × PricingQuantity = Cost exactly where the quantity in pricing units and the
// product have at most 20 decimal places, and otherwise within (UnitPrice + PricingQuantity + 2)
// halves of 10^-20 (an hour's share of 1,234 seconds is 0.342777…: no finite decimal).
import { parseProductKey, type UnitType } from '../catalogue/catalogue';
import { InvalidUsageError, UnknownProductError } from '../errors/pricing-error';
import type { PriceRecord } from './price-record';
import { costOf, Exact, type Quantity } from './quote';
import {
  costOfEvents,
  costOfUsage,
  priceChangesWithin,
  type ApplicablePrices,
  type MeteredEvent,
  type PricedUsageLine,
  type TimeUsage,
  type UsageLine,
} from './usage';

/** The columns of a row, in this order in CSV: FOCUS's own alphabetically, then the provider's (`x_`). */
export const FOCUS_COLUMNS = [
  'BilledCost',
  'BillingAccountId',
  'BillingAccountName',
  'BillingCurrency',
  'BillingPeriodEnd',
  'BillingPeriodStart',
  'ChargeCategory',
  'ChargeClass',
  'ChargeDescription',
  'ChargeFrequency',
  'ChargePeriodEnd',
  'ChargePeriodStart',
  'ConsumedQuantity',
  'ConsumedUnit',
  'ContractedCost',
  'ContractedUnitPrice',
  'EffectiveCost',
  'InvoiceId',
  'InvoiceIssuerName',
  'ListCost',
  'ListUnitPrice',
  'PricingCategory',
  'PricingQuantity',
  'PricingUnit',
  'ProviderName',
  'PublisherName',
  'ServiceCategory',
  'ServiceName',
  'SkuId',
  'SkuPriceId',
  'x_PriceRecordId',
  'x_ListPriceRecordId',
] as const;
export type FocusColumn = (typeof FOCUS_COLUMNS)[number];

/** One FOCUS cost row: every column, as text (decimals as plain decimal strings), `null` where FOCUS has a null. */
export type FocusRow = { readonly [Column in FocusColumn]: string | null };

/** What a library that prices usage cannot know: who bills whom, and for which period. */
export interface FocusBilling {
  /** ProviderName; PublisherName and InvoiceIssuerName when those are not given. */
  readonly providerName: string;
  readonly publisherName?: string;
  readonly invoiceIssuerName?: string;
  readonly billingAccountId: string;
  /** `null` (the default) when billing accounts have no display name. */
  readonly billingAccountName?: string | null;
  /** Whole seconds, UTC; every part of the usage lies in `[billingPeriodStart, billingPeriodEnd)`. */
  readonly billingPeriodStart: Date;
  readonly billingPeriodEnd: Date;
  /** `null` (the default) until the charges are invoiced. */
  readonly invoiceId?: string | null;
}

/**
 * Metered usage measured over `[from, to)` (an hour of traffic, a day of requests): exactly one of
 * `quantity` (in the family's unit) and `bytes` (`gb` only), priced at the price in force
 * throughout; a change of the applicable or the list price inside the period is refused
 * (INVALID_USAGE): give the usage before and after it apart.
 */
export interface MeteredPeriod {
  readonly from: Date;
  readonly to: Date;
  readonly quantity?: Quantity;
  readonly bytes?: Quantity;
}

/** Metered events, each priced at its instant, as costOfEvents prices them. */
export interface MeteredEvents {
  readonly events: readonly MeteredEvent[];
}

/** Usage of the families billed in time (TimeUsage, as costOfUsage takes it) or metered ones. */
export type FocusUsage = TimeUsage | MeteredPeriod | MeteredEvents;

/** A part of the usage that no price covered: it has no row (FOCUS requires prices on a usage row). */
export interface FocusUnpriced {
  readonly from: Date;
  readonly to: Date;
  /** In the family's unit, as usage.ts writes quantities. */
  readonly quantity: string;
}

export interface FocusCost {
  /** In time order, one per window of one applicable price and one list price. */
  readonly rows: readonly FocusRow[];
  /** The unpriced parts, in time order: reported, never a row with a zero or a null price. */
  readonly unpriced: readonly FocusUnpriced[];
  /** False when any part of the usage is unpriced. */
  readonly complete: boolean;
}

/** FOCUS's UnitFormat names of the unit types: plural, capitalized, compound units hyphenated. */
const UNIT_NAMES: Readonly<Record<UnitType, string>> = {
  seconds: 'Seconds',
  gib_hours: 'GiB-Hours',
  gb: 'GB',
  metric_months: 'Metric-Months',
  requests: 'Requests',
  samples: 'Samples',
};

/** FOCUS's ServiceCategory of each family, by the first part of its product keys. */
const SERVICE_CATEGORIES: Readonly<Record<string, string>> = {
  compute: 'Compute',
  network: 'Networking',
  storage: 'Storage',
  observability: 'Management and Governance',
};

/** `unit_count` units of `unit_type` as FOCUS writes a unit: `3600 Seconds`, `GB` (a count of 1 is left out). */
export function focusUnit(unitCount: number, unitType: UnitType): string {
  return unitCount === 1 ? UNIT_NAMES[unitType] : `${unitCount} ${UNIT_NAMES[unitType]}`;
}

/**
 * The SKU price of a row: the product key and the pricing unit, never the amount, the window or the
 * scope, so that it stays the same across price changes and across billing accounts (FOCUS 1.2,
 * SkuPriceId: consistent over time and across billing accounts or contracts). `x_PriceRecordId`
 * names the record, scope included.
 */
export function skuPriceId(price: Pick<PriceRecord, 'productKey' | 'unitCount' | 'unitType'>): string {
  return `${price.productKey}:${price.unitCount}:${price.unitType}`;
}

/**
 * The FOCUS rows of one product's usage, priced at `prices` (its list prices and the agreed prices
 * of the organization it belongs to, each sorted by `validFrom`), for `billing`. Throws
 * UNKNOWN_PRODUCT for a key of no family, and INVALID_USAGE for usage that costOfUsage or
 * costOfEvents refuses, a metered period that a price change splits, usage outside the billing
 * period, or billing details that are missing or malformed (`details.field` names the input).
 */
export function focusRows(
  productKey: string,
  prices: ApplicablePrices,
  usage: FocusUsage,
  billing: FocusBilling,
): FocusCost {
  const parts = parseProductKey(productKey);
  if (!parts) throw new UnknownProductError(productKey);
  const fixed = fixedColumns(productKey, billing);
  const period = { from: billing.billingPeriodStart.getTime(), to: billing.billingPeriodEnd.getTime() };
  const pricer = pricerOf(parts.family.unitType, usage);
  const listOnly: ApplicablePrices = { list: prices.list, organization: [] };
  const rows: FocusRow[] = [];
  const unpriced: FocusUnpriced[] = [];
  for (const line of pricer.price(prices)) {
    if (line.from.getTime() < period.from || line.to.getTime() > period.to) {
      const field = line.from.getTime() < period.from ? 'billingPeriodStart' : 'billingPeriodEnd';
      throw new InvalidUsageError(
        `usage from ${line.from.toISOString()} to ${line.to.toISOString()} lies outside the billing period`,
        field,
      );
    }
    if (!line.priced) {
      unpriced.push({ from: line.from, to: line.to, quantity: line.quantity });
    } else if (line.price.organizationId === null) {
      rows.push(rowOf(fixed, pricer, line, line, line));
    } else {
      // The list price in force under the agreed one: a row per list price, or none (no list price).
      for (const list of pricer.price(listOnly, line.from, line.to)) {
        const contracted = sameWindow(list, line) ? line : onlyLine(pricer.price(only(line.price), list.from, list.to));
        rows.push(rowOf(fixed, pricer, list, contracted, list.priced ? list : null));
      }
    }
  }
  return { rows, unpriced, complete: unpriced.length === 0 };
}

/**
 * `rows` as CSV (RFC 4180): a header of FOCUS_COLUMNS, then one record per row, each line ended by
 * CRLF; a field with a comma, a quote or a line break quoted, its quotes doubled; a null empty.
 */
export function focusCsv(rows: readonly FocusRow[]): string {
  return [focusCsvHeader(), ...rows.map(focusCsvRecord)].join('');
}

/** The CSV header line, CRLF included. */
export function focusCsvHeader(): string {
  return `${FOCUS_COLUMNS.join(',')}\r\n`;
}

/** One row as a CSV record, CRLF included. */
export function focusCsvRecord(row: FocusRow): string {
  return `${FOCUS_COLUMNS.map((column) => csvField(row[column])).join(',')}\r\n`;
}

const NEEDS_QUOTES = /[",\r\n]/;

function csvField(value: string | null): string {
  if (value === null) return '';
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** How one usage is priced, for the whole usage or for a window of it. */
interface Pricer {
  /** Its lines at `prices` (within `[from, to)` when given), as costOfUsage or costOfEvents gives them. */
  price(prices: ApplicablePrices, from?: Date, to?: Date): readonly UsageLine[];
}

function pricerOf(unitType: UnitType, usage: FocusUsage): Pricer {
  if ('events' in usage) {
    const events = usage.events;
    return {
      price: (prices, from, to) => {
        if (from === undefined || to === undefined) return costOfEvents(prices, unitType, events).lines;
        const within = events.filter(
          (event) => event.at.getTime() >= from.getTime() && event.at.getTime() < to.getTime(),
        );
        return costOfEvents(prices, unitType, within).lines;
      },
    };
  }
  if (unitType === 'seconds' || unitType === 'gib_hours') {
    const time = usage as TimeUsage;
    if ('quantity' in usage || 'bytes' in usage) {
      throw new InvalidUsageError(
        `${unitType} are priced by time: give from, to (and sizeGib), no quantity`,
        'quantity',
      );
    }
    return {
      price: (prices, from = time.from, to = time.to) =>
        costOfUsage(prices, unitType, { from, to, sizeGib: time.sizeGib }).lines,
    };
  }
  return meteredPeriodPricer(unitType, usage);
}

/** A metered period, priced as one event at its start: refused where a price changes inside it. */
function meteredPeriodPricer(unitType: UnitType, usage: MeteredPeriod): Pricer {
  const { from, to } = usage;
  const fromMs = from instanceof Date ? from.getTime() : NaN;
  const toMs = to instanceof Date ? to.getTime() : NaN;
  if (Number.isNaN(fromMs)) throw new InvalidUsageError('from is not a valid Date', 'from');
  if (Number.isNaN(toMs)) throw new InvalidUsageError('to is not a valid Date', 'to');
  if (!(fromMs < toMs)) {
    throw new InvalidUsageError(
      `a metered period ends after it starts: from ${from.toISOString()} to ${to.toISOString()}`,
      'to',
    );
  }
  if ((usage.quantity === undefined) === (usage.bytes === undefined)) {
    throw new InvalidUsageError('a metered period has exactly one of quantity and bytes', 'quantity');
  }
  const event: MeteredEvent = { at: from, quantity: usage.quantity, bytes: usage.bytes };
  return {
    price: (prices) => {
      const changes = [
        ...new Set([
          ...priceChangesWithin(prices, fromMs, toMs),
          ...priceChangesWithin({ list: prices.list, organization: [] }, fromMs, toMs),
        ]),
      ].sort((a, b) => a - b);
      if (changes.length > 0) {
        const at = changes.map((ms) => new Date(ms).toISOString());
        throw new InvalidUsageError(
          `the price changes at ${at[0]}, inside the metered period from ${from.toISOString()} to ${to.toISOString()}: give the usage before and after it apart`,
          'to',
          { price_changes_at: at },
        );
      }
      return costOfEvents(prices, unitType, [event]).lines.map((line) => ({ ...line, from, to }));
    },
  };
}

/** Prices of one record: what a row's part of the usage is priced at, alone. */
function only(price: PriceRecord): ApplicablePrices {
  return { list: [price], organization: [] };
}

/** The one line of usage priced at a price in force throughout it. */
function onlyLine(lines: readonly UsageLine[]): PricedUsageLine {
  const [line] = lines;
  // The price was in force over the whole window, by construction (focusRows).
  if (lines.length !== 1 || !line.priced) throw new Error('a window of one price gave other than one priced line');
  return line;
}

function sameWindow(a: UsageLine, b: UsageLine): boolean {
  return a.from.getTime() === b.from.getTime() && a.to.getTime() === b.to.getTime();
}

type FixedColumns = Pick<
  FocusRow,
  | 'BillingAccountId'
  | 'BillingAccountName'
  | 'BillingCurrency'
  | 'BillingPeriodEnd'
  | 'BillingPeriodStart'
  | 'ChargeCategory'
  | 'ChargeClass'
  | 'ChargeFrequency'
  | 'InvoiceId'
  | 'InvoiceIssuerName'
  | 'PricingCategory'
  | 'ProviderName'
  | 'PublisherName'
  | 'ServiceCategory'
  | 'ServiceName'
  | 'SkuId'
>;

/** The columns every row of one product and billing shares, the billing checked. */
function fixedColumns(productKey: string, billing: FocusBilling): FixedColumns {
  const text = (value: unknown, field: string, optional = false): string | null => {
    if (optional && (value === undefined || value === null)) return null;
    if (typeof value !== 'string' || value === '')
      throw new InvalidUsageError(`${field} must be a non-empty string`, field);
    return value;
  };
  const provider = text(billing.providerName, 'providerName')!;
  const start = periodInstant(billing.billingPeriodStart, 'billingPeriodStart');
  const end = periodInstant(billing.billingPeriodEnd, 'billingPeriodEnd');
  if (!(start < end)) throw new InvalidUsageError('the billing period ends before it starts', 'billingPeriodEnd');
  const family = parseProductKey(productKey)!.family.family;
  return {
    BillingAccountId: text(billing.billingAccountId, 'billingAccountId'),
    BillingAccountName: text(billing.billingAccountName, 'billingAccountName', true),
    BillingCurrency: 'EUR',
    BillingPeriodEnd: focusInstant(end),
    BillingPeriodStart: focusInstant(start),
    ChargeCategory: 'Usage',
    ChargeClass: null,
    ChargeFrequency: 'Usage-Based',
    InvoiceId: text(billing.invoiceId, 'invoiceId', true),
    InvoiceIssuerName: text(billing.invoiceIssuerName, 'invoiceIssuerName', true) ?? provider,
    PricingCategory: 'Standard',
    ProviderName: provider,
    PublisherName: text(billing.publisherName, 'publisherName', true) ?? provider,
    ServiceCategory: SERVICE_CATEGORIES[productKey.slice(0, productKey.indexOf('.'))],
    ServiceName: family,
    SkuId: productKey,
  };
}

/** The earliest and the latest instant FOCUS's `YYYY-MM-DDTHH:mm:ssZ` can write (four-digit years). */
const FIRST_WRITABLE = Date.parse('0000-01-01T00:00:00Z');
const LAST_WRITABLE = Date.parse('9999-12-31T23:59:59Z');

/** A billing period's bound: a valid Date of whole seconds that FOCUS can write. */
function periodInstant(value: unknown, field: string): number {
  const ms = value instanceof Date ? value.getTime() : NaN;
  if (Number.isNaN(ms)) throw new InvalidUsageError(`${field} is not a valid Date`, field);
  if (ms % 1000 !== 0) throw new InvalidUsageError(`${field} is not a whole second`, field);
  if (ms < FIRST_WRITABLE || ms > LAST_WRITABLE) {
    throw new InvalidUsageError(`${field} is not in a four-digit year`, field);
  }
  return ms;
}

/** An instant of whole seconds as FOCUS writes it: `YYYY-MM-DDTHH:mm:ssZ`, UTC. */
function focusInstant(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/**
 * A row's charge period: the whole seconds its window `[from, to)` (milliseconds) touches, from the
 * second that holds `from` to the end of the second that holds its last millisecond. Windows of
 * whole seconds are written as they are, and adjacent rows meet; a boundary inside a second (a
 * price change at .500, or the end of metered events, the last one's instant + 1 ms) gives both
 * rows that second, as both have usage in it. Quantities and costs are of the exact window.
 */
export function chargePeriod(from: Date, to: Date): { readonly start: string; readonly end: string } {
  const second = 1000;
  return {
    start: focusInstant(Math.floor(from.getTime() / second) * second),
    end: focusInstant(Math.ceil(to.getTime() / second) * second),
  };
}

/** One row: the usage of `window`, at the applicable price (`contracted`) and at the list price (`list`; none: the applicable one). */
function rowOf(
  fixed: FixedColumns,
  pricer: Pricer,
  window: UsageLine,
  contracted: PricedUsageLine,
  list: PricedUsageLine | null,
): FocusRow {
  const price = contracted.price;
  const listPrice = list?.price ?? price;
  // quantity / unit_count, rounded as a cost is: the cost of the same usage at 1 per pricing unit.
  const pricingQuantity = onlyLine(pricer.price(only({ ...price, amount: '1' }), window.from, window.to)).cost;
  const unit = focusUnit(price.unitCount, price.unitType);
  const scope = price.organizationId === null ? 'list price' : 'price agreed with the organization';
  const period = chargePeriod(window.from, window.to);
  return {
    BilledCost: contracted.cost,
    ...fixed,
    ChargeDescription: `${price.productKey} at ${price.amount} EUR per ${unit} (${scope})`,
    ChargePeriodEnd: period.end,
    ChargePeriodStart: period.start,
    ConsumedQuantity: contracted.quantity,
    ConsumedUnit: UNIT_NAMES[price.unitType],
    ContractedCost: contracted.cost,
    ContractedUnitPrice: price.amount,
    EffectiveCost: contracted.cost,
    ListCost: list?.cost ?? contracted.cost,
    // The list price per the row's pricing unit: its amount as set when the units agree.
    ListUnitPrice:
      listPrice.unitCount === price.unitCount ? listPrice.amount : costOf(listPrice, new Exact(price.unitCount)),
    PricingQuantity: pricingQuantity,
    PricingUnit: unit,
    SkuPriceId: skuPriceId(price),
    x_PriceRecordId: String(price.id),
    x_ListPriceRecordId: list === null ? null : String(list.price.id),
  };
}
