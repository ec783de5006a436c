import { PRODUCT_FAMILIES, parseProductKey, type DimensionName, type UnitType } from '../catalogue/catalogue';
import { formatInstant } from './instant';
import type { PriceRecord } from './price-record';

/** The public document of `GET /v1/pricing` (docs/price-list-api.md, section 2). */
export interface PriceListDocument {
  readonly currency: 'EUR';
  readonly amounts_exclude_vat: true;
  readonly last_changed: string | null;
  readonly families: readonly PriceListFamily[];
}

export interface PriceListFamily {
  readonly family: string;
  readonly prices: readonly PriceListEntry[];
}

export interface PriceListEntry {
  readonly product_key: string;
  readonly dimensions?: Readonly<Partial<Record<DimensionName, string>>>;
  readonly unit_type: UnitType;
  readonly unit_count: number;
  readonly amount: string;
  readonly valid_from: string;
  readonly valid_until: string | null;
}

/** A list price as the document shows it (section 2.3), its keys in the document's order. */
export function listEntry(record: PriceRecord): PriceListEntry {
  const dimensions = parseProductKey(record.productKey)?.dimensions;
  return {
    product_key: record.productKey,
    ...(dimensions && { dimensions }),
    unit_type: record.unitType,
    unit_count: record.unitCount,
    amount: record.amount,
    valid_from: formatInstant(record.validFrom),
    valid_until: record.validUntil === null ? null : formatInstant(record.validUntil),
  };
}

/**
 * The entry of a list price (section 2.3) as the document's JSON text: exactly
 * `JSON.stringify(listEntry(record))`, written without the object (an `/at` of a version not
 * prepared yet serializes every entry of the list). Joined, not concatenated: `+` makes a tree of
 * a dozen strings that the present keeps until its body is written, and a first load at 100,000
 * list prices promoted 90 MB of them to the old generation (docs/benchmarks.md, "The list's past").
 */
export function entryText(record: PriceRecord): string {
  const dimensions = parseProductKey(record.productKey)?.dimensions;
  return [
    '{"product_key":',
    JSON.stringify(record.productKey),
    dimensions ? `,"dimensions":${JSON.stringify(dimensions)}` : '',
    ',"unit_type":',
    JSON.stringify(record.unitType),
    ',"unit_count":',
    JSON.stringify(record.unitCount),
    ',"amount":',
    JSON.stringify(record.amount),
    ',"valid_from":"',
    formatInstant(record.validFrom),
    record.validUntil === null ? '","valid_until":null}' : `","valid_until":"${formatInstant(record.validUntil)}"}`,
  ].join('');
}

/** entryText as bytes. */
export function entryBytes(record: PriceRecord): Buffer {
  return Buffer.from(entryText(record));
}

/** The public list at one instant (core/list-history.ts makes it). */
export interface ListAt {
  readonly at: number;
  /** The list prices in force at `at`, as the list showed them (their end as known then), in the document's order. */
  readonly prices: readonly PriceRecord[];
  /** The family (its place in section 2.4) of each of `prices`. */
  readonly families: readonly number[];
  /** The entry of each of `prices`, serialized (entryText). */
  readonly entries: readonly string[];
  /** `last_changed` (docs/decisions.md): the version's instant; `null` only when nothing was ever priced. */
  readonly lastChanged: number | null;
  /** The version before, for If-Modified-Since. */
  readonly previousChange: number | null;
  /** The next version's instant; Infinity when none is known. */
  readonly nextChange: number;
}

/** The document of the list at one instant (section 2), as objects. */
export function priceListDocument(list: ListAt): PriceListDocument {
  const families: PriceListFamily[] = [];
  let current: { family: string; prices: PriceListEntry[] } | undefined;
  let order = -1;
  for (const [i, record] of list.prices.entries()) {
    const family = list.families[i];
    if (family !== order) {
      order = family;
      families.push((current = { family: PRODUCT_FAMILIES[family].family, prices: [] }));
    }
    current!.prices.push(listEntry(record));
  }
  return {
    currency: 'EUR',
    amounts_exclude_vat: true,
    last_changed: list.lastChanged === null ? null : formatInstant(list.lastChanged),
    families,
  };
}
