// Types of prices.mjs, for its Jest spec and the browser suite (the page itself is plain JavaScript).
import type { Decimal } from 'decimal.js';

/** One entry of `families[].prices` in GET /v1/pricing. */
export interface Price {
  product_key: string;
  dimensions?: Record<string, string>;
  unit_type: string;
  unit_count: number;
  amount: string;
  valid_from: string;
  valid_until: string | null;
}

/** The GET /v1/pricing document. */
export interface PriceList {
  currency: string;
  amounts_exclude_vat: boolean;
  last_changed: string | null;
  families: { family: string; prices: Price[] }[];
}

export interface QuantityField {
  name: string;
  label: string;
  unit: string;
  initial: string;
  factor: number;
}

export interface Expansion {
  whole: string;
  fraction: string;
  repetend: string;
  cut?: boolean;
}

export interface Change {
  kind: 'added' | 'changed' | 'removed';
  family: string;
  productKey: string;
  before?: Price;
  after?: Price;
}

export function familyName(family: string): string;
export function familyBilled(family: string): string;
export function productName(family: string, price: Price): string;
export function unitWords(unitType: string, unitCount: number): string;
export function formatEuro(amount: string): string;
export function groupDigits(digits: string): string;
export function quantityFields(unitType: string): QuantityField[];
export function parseQuantity(
  text: string,
): { value: Decimal; error?: undefined } | { error: string; value?: undefined };
export function quantityInUnits(unitType: string, values: Record<string, string>): Decimal;
export function cost(
  amount: string,
  unitCount: number,
  quantity: Decimal | string,
): { cents: string; exact: Expansion };
export function exactText(exact: Expansion): string;
export function diffPriceLists(before: PriceList, after: PriceList): Change[];

/** One change of GET /v1/pricing/changes. */
export interface FeedChange {
  at: string;
  product_key: string;
  family: string;
  before: Price | null;
  after: Price | null;
}

export function feedChange(change: FeedChange): Change;
export function describeChange(change: Change, formatDate: (iso: string) => string): string;
