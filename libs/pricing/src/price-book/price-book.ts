import { explainProductKey, isUnitType, parseProductKey, type UnitType } from '../catalogue/catalogue';
import { parseInstant } from '../core/instant';
import { PLAIN_DECIMAL } from '../core/quote';
import { quoteValue } from '../errors/bounded-text';

/** A price book file (docs/price-book-cli.md, "The price book file"), checked and typed. */
export interface PriceBook {
  readonly products: readonly AvailabilityEntry[];
  readonly prices: readonly PriceBookEntry[];
}

export interface AvailabilityEntry {
  /** Position in the file, for messages (`products[2]`). */
  readonly index: number;
  readonly productKey: string;
  readonly onSale: boolean;
}

export interface PriceBookEntry {
  /** Position in the file, for messages (`prices[3]`). */
  readonly index: number;
  readonly productKey: string;
  /** `null` for a list price. */
  readonly organizationId: string | null;
  readonly unitType: UnitType;
  readonly unitCount: number;
  readonly amount: string;
  /** Epoch milliseconds; `null` when omitted: the price starts when the book is applied. */
  readonly validFrom: number | null;
  /** Epoch milliseconds; `null` for no end. */
  readonly validUntil: number | null;
}

export type ParsedPriceBook = { readonly book: PriceBook } | { readonly errors: readonly string[] };

/** Every amount this long fits the amount column exactly (below 10^40, at most 38 decimals). */
const MAX_AMOUNT_LENGTH = 40;
export const ORGANIZATION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_UNIT_COUNT = 2_147_483_647;

const BOOK_FIELDS = new Set(['description', 'products', 'prices']);
/** The fields of an entry of `products`. */
export const PRODUCT_FIELDS: ReadonlySet<string> = new Set(['product_key', 'on_sale']);
/** The fields of an entry of `prices`. */
export const PRICE_FIELDS: ReadonlySet<string> = new Set([
  'product_key',
  'organization_id',
  'unit_type',
  'unit_count',
  'amount',
  'valid_from',
  'valid_until',
]);

/**
 * Checks a parsed JSON value against the price book format; every problem is named by its path,
 * and quotes at most MAX_QUOTED_CHARACTERS of a value (errors/bounded-text.ts).
 */
export function parsePriceBook(json: unknown): ParsedPriceBook {
  const errors: string[] = [];
  if (!isObject(json)) return { errors: ['price book: must be a JSON object with "products" and/or "prices"'] };
  unknownFields(json, BOOK_FIELDS, 'price book', errors);
  if (json.description !== undefined && typeof json.description !== 'string') {
    errors.push('description: must be a string');
  }
  const products = arrayField(json, 'products', errors).flatMap((raw, index) => {
    const entry = parseAvailability(raw, `products[${index}]`, index, errors);
    return entry ? [entry] : [];
  });
  const seen = new Map<string, number>();
  for (const product of products) {
    const first = seen.get(product.productKey);
    if (first !== undefined) {
      errors.push(
        `products[${product.index}].product_key: ${quoteValue(product.productKey)} is already listed at products[${first}]`,
      );
    } else seen.set(product.productKey, product.index);
  }
  const prices = arrayField(json, 'prices', errors).flatMap((raw, index) => {
    const entry = parsePrice(raw, `prices[${index}]`, index, errors);
    return entry ? [entry] : [];
  });
  return errors.length > 0 ? { errors } : { book: { products, prices } };
}

function parseAvailability(raw: unknown, path: string, index: number, errors: string[]): AvailabilityEntry | undefined {
  if (!isObject(raw)) {
    errors.push(`${path}: must be an object with "product_key" and "on_sale"`);
    return undefined;
  }
  const before = errors.length;
  unknownFields(raw, PRODUCT_FIELDS, path, errors);
  const productKey = productKeyField(raw, path, errors);
  if (typeof raw.on_sale !== 'boolean') errors.push(`${path}.on_sale: must be true or false`);
  if (errors.length > before || productKey === undefined) return undefined;
  return { index, productKey, onSale: raw.on_sale as boolean };
}

function parsePrice(raw: unknown, path: string, index: number, errors: string[]): PriceBookEntry | undefined {
  if (!isObject(raw)) {
    errors.push(`${path}: must be an object`);
    return undefined;
  }
  const before = errors.length;
  unknownFields(raw, PRICE_FIELDS, path, errors);
  const productKey = productKeyField(raw, path, errors);

  let organizationId: string | null = null;
  if (raw.organization_id !== undefined) {
    if (typeof raw.organization_id !== 'string' || !ORGANIZATION_ID.test(raw.organization_id)) {
      errors.push(
        `${path}.organization_id: must be 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`,
      );
    } else organizationId = raw.organization_id;
  }

  const unitType = raw.unit_type;
  if (!isUnitType(unitType)) {
    errors.push(`${path}.unit_type: must be one of seconds, gib_hours, gb, metric_months, requests, samples`);
  } else if (productKey !== undefined) {
    const family = parseProductKey(productKey)?.family;
    if (family && family.unitType !== unitType) {
      errors.push(`${path}.unit_type: family ${family.family} is billed in ${family.unitType}, not ${unitType}`);
    }
  }

  const unitCount = raw.unit_count;
  if (typeof unitCount !== 'number' || !Number.isInteger(unitCount) || unitCount < 1 || unitCount > MAX_UNIT_COUNT) {
    errors.push(`${path}.unit_count: must be a positive JSON integer (at most ${MAX_UNIT_COUNT})`);
  }

  const amount = raw.amount;
  if (typeof amount !== 'string') {
    errors.push(`${path}.amount: must be a JSON string such as "0.0480" (a JSON number would be rounded)`);
  } else if (!PLAIN_DECIMAL.test(amount) || amount.length > MAX_AMOUNT_LENGTH) {
    errors.push(
      `${path}.amount: ${quoteValue(amount)} is not a decimal amount: digits with an optional fraction, no sign, exponent or leading zeros, at most ${MAX_AMOUNT_LENGTH} characters (e.g. "0.0480", "12")`,
    );
  }

  let validFrom: number | null = null;
  if (raw.valid_from !== undefined) {
    validFrom = instantField(raw.valid_from, `${path}.valid_from`, 'or omitted to start now', errors) ?? null;
  }
  let validUntil: number | null = null;
  if (raw.valid_until !== undefined && raw.valid_until !== null) {
    validUntil = instantField(raw.valid_until, `${path}.valid_until`, 'or null for no end', errors) ?? null;
  }
  if (validFrom !== null && validUntil !== null && validUntil <= validFrom) {
    errors.push(`${path}.valid_until: must be after valid_from`);
  }
  if (errors.length > before || productKey === undefined) return undefined;
  return {
    index,
    productKey,
    organizationId,
    unitType: unitType as UnitType,
    unitCount: unitCount as number,
    amount: amount as string,
    validFrom,
    validUntil,
  };
}

function productKeyField(raw: Record<string, unknown>, path: string, errors: string[]): string | undefined {
  const key = raw.product_key;
  if (typeof key !== 'string') {
    errors.push(`${path}.product_key: must be a string such as "compute.g2.4"`);
    return undefined;
  }
  const problem = explainProductKey(key);
  if (problem) {
    errors.push(`${path}.product_key: ${problem}`);
    return undefined;
  }
  return key;
}

/** A timestamp of the book as epoch milliseconds: instants enter the library as numbers here. */
function instantField(value: unknown, path: string, alternative: string, errors: string[]): number | undefined {
  const instant = typeof value === 'string' ? parseInstant(value)?.getTime() : undefined;
  if (instant === undefined && typeof value === 'string' && parseInstant(value, { leapSecond: true })) {
    // docs/decisions.md, "Leap seconds": a stored instant is stored as written, or not at all.
    errors.push(
      `${path}: a leap second (:60) cannot be stored, as instants here (as in POSIX time) have none: ` +
        `write the instant just before it (:59.999) or the next minute's :00 instead`,
    );
    return undefined;
  }
  if (instant === undefined) {
    errors.push(
      `${path}: must be an RFC 3339 timestamp with an offset and at most millisecond precision, such as "2027-01-01T00:00:00Z", ${alternative}`,
    );
  }
  return instant;
}

function arrayField(json: Record<string, unknown>, field: string, errors: string[]): unknown[] {
  const value = json[field];
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    errors.push(`${field}: must be an array`);
    return [];
  }
  return value;
}

function unknownFields(
  raw: Record<string, unknown>,
  allowed: ReadonlySet<string>,
  path: string,
  errors: string[],
): void {
  for (const field of Object.keys(raw)) {
    if (!allowed.has(field)) errors.push(`${path}: unknown field ${quoteValue(field)}`);
  }
}

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
