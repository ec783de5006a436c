import type { UnitType } from '../catalogue/catalogue';

/** A price in force, as other modules see it. */
export interface Price {
  /** The price record's id: stable, never reused (an invoice line names it). */
  readonly id: number;
  readonly productKey: string;
  /** `list`, or `organization` for a price agreed with one organization. */
  readonly scope: 'list' | 'organization';
  readonly organizationId: string | null;
  readonly unitType: UnitType;
  readonly unitCount: number;
  /** EUR for `unitCount` units, net of VAT, as a decimal string. */
  readonly amount: string;
  readonly validFrom: Date;
  /** The end as the book recorded it at `asRecordedAt`. */
  readonly validUntil: Date | null;
}

/** The book an answer was read from (docs/using-pricing.md, "The book as recorded"). */
export interface AsRecorded {
  /**
   * The price book as recorded at this instant priced the answer: asking again with it gives the
   * same answer after any later write. The query's `asRecordedAt`, or the instant it defaulted to.
   */
  readonly asRecordedAt: Date;
}

/** "No price" is an explicit answer, never zero. */
export type PriceLookup = ({ readonly found: true; readonly price: Price } | { readonly found: false }) & AsRecorded;

/** Which book prices an answer: the book as recorded at an instant (default now). */
export interface RecordedQuery {
  /**
   * Price from the book as it was recorded at this instant (not later than now): the prices written
   * by then, with the ends they had then. Default: now. Re-price a closed invoice with the
   * `asRecordedAt` its answers gave, and the figures are the same after any later write.
   */
  readonly asRecordedAt?: Date;
}

export interface PriceQuery extends RecordedQuery {
  /** When the price applies; default now. */
  readonly at?: Date;
  /** Looks up this organization's agreed price first, then the list price. */
  readonly organizationId?: string;
}

/** A quote, or "no price" (never zero), in the same shape as PriceLookup. */
export type QuoteLookup = (({ readonly found: true } & Quote) | { readonly found: false }) & AsRecorded;

export interface Quote {
  readonly price: Price;
  /** The quantity, in the family's unit (seconds, GiB-hours, decimal GB, ...). */
  readonly quantity: string;
  /** EUR, net of VAT: amount × quantity / unit_count, rounded once to 20 decimal places. */
  readonly cost: string;
}

/** Which prices apply to usage: the organization's agreed prices where in force, else list prices. */
export interface UsageQuery extends RecordedQuery {
  readonly organizationId?: string;
}

/** A window of usage priced at one price. */
export interface PricedUsage {
  readonly priced: true;
  /** Start of the window, inclusive. */
  readonly from: Date;
  /** End of the window, exclusive. */
  readonly to: Date;
  /** In the family's unit, a plain decimal string (GiB-hours rounded to 20 places; the cost uses the exact value). */
  readonly quantity: string;
  readonly price: Price;
  /** EUR, net of VAT: amount × quantity / unit_count, rounded once, half-even, to 20 places. */
  readonly cost: string;
}

/** A window of usage that no price covered: its quantity is known, its cost is not (never zero). */
export interface UnpricedUsage {
  readonly priced: false;
  readonly from: Date;
  readonly to: Date;
  readonly quantity: string;
  readonly price: null;
  readonly cost: null;
}

/** The cost of usage, line by line; add costs with `sumCosts` (decimal.js's default precision would round). */
export interface UsageCost extends AsRecorded {
  /** In time order; windows do not overlap. */
  readonly lines: readonly (PricedUsage | UnpricedUsage)[];
  /** EUR, the exact sum of the priced lines. Short of the true cost when `complete` is false. */
  readonly total: string;
  /** False when any part of the usage had no price. */
  readonly complete: boolean;
}
