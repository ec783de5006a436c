import { PRODUCT_FAMILIES, parseProductKey, type DimensionName, type UnitType } from '../catalogue/catalogue';
import { compareCodePoints, naturalKey } from '../catalogue/natural-order';
import { formatInstant } from './instant';
import { byValidFrom, isInForce, type PriceRecord } from './price-record';
import { mergeInSteps, sortInSteps, type Steps } from './slices';

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

/** The entry of a list price (section 2.3) as the document's JSON bytes. */
export function entryBytes(record: PriceRecord): Buffer {
  return Buffer.from(JSON.stringify(listEntry(record)));
}

/** One product key of the public list and its list prices that can still be listed. */
export interface ListedProduct {
  readonly productKey: string;
  /** The family's place in section 2.4. */
  readonly family: number;
  /** Natural order (section 2.2) as a plain string comparison (catalogue/natural-order.ts). */
  readonly sortKey: string;
  /** Not ended at the list's `from`, sorted by `validFrom`; never overlapping (the database refuses it). */
  readonly prices: readonly PriceRecord[];
  /**
   * Each of `prices` serialized (entryBytes), once: a product that a change does not touch keeps
   * its bytes in every list after it.
   */
  readonly entries: readonly Buffer[];
}

/**
 * The public list from the instant `from` on: only what can still be listed is held (an ended
 * price is never listed again), so a change of the list costs work in proportion to the product
 * keys it touches, never to the history. Immutable: a change makes a new one (`withProducts`)
 * that shares every unchanged product.
 */
export interface PublicList {
  readonly from: number;
  /** In the document's order: families as in section 2.4, then natural order of product keys. */
  readonly products: readonly ListedProduct[];
  /**
   * The two latest instants up to `from` at which the list changed by what is no longer held
   * (ended prices, writes): `last_changed` and If-Modified-Since need them.
   */
  readonly past: readonly number[];
  /** Instants of list writes after `from`, ascending (a database clock a little ahead of ours). */
  readonly writes: readonly number[];
}

/**
 * The public list of `records` (list prices of any keys, any order) from `from` on, given the
 * instants at which list prices were written (set, ended or withdrawn: the change log). In steps
 * (core/slices.ts): a large book's list is built without holding the event loop long.
 */
export function* publicList(
  records: Iterable<PriceRecord>,
  writes: readonly number[],
  from: number,
): Steps<PublicList> {
  const byKey = new Map<string, PriceRecord[]>();
  let n = 0;
  for (const record of records) {
    if ((++n & 1023) === 0) yield;
    if (record.organizationId !== null) continue;
    const prices = byKey.get(record.productKey);
    if (prices) prices.push(record);
    else byKey.set(record.productKey, [record]);
  }
  return yield* withProducts({ from: -Infinity, products: [], past: [], writes: [] }, byKey, writes, from);
}

/**
 * `list` with the list prices of the product keys in `changed` replaced (an empty array: the key
 * is no longer listed), `writes` added, from `from` on (not before `list.from`).
 */
export function* withProducts(
  list: PublicList,
  changed: ReadonlyMap<string, readonly PriceRecord[]>,
  writes: readonly number[],
  from: number,
): Steps<PublicList> {
  const past = new LatestTwo(from);
  for (const at of list.past) past.consider(at);
  const later: number[] = [];
  for (const at of [...list.writes, ...writes]) if (!past.consider(at)) later.push(at);
  const replaced: ListedProduct[] = [];
  let n = 0;
  for (const [productKey, records] of changed) {
    const product = listedProduct(productKey, records, past);
    if (product) replaced.push(product);
    if ((++n & 255) === 0) yield;
  }
  const kept = changed.size === 0 ? list.products : list.products.filter((p) => !changed.has(p.productKey));
  const sorted = yield* sortInSteps(replaced, inListOrder);
  return {
    from,
    products: yield* mergeInSteps(kept, sorted, inListOrder),
    past: past.values(),
    writes: later.sort((a, b) => a - b),
  };
}

/** The product as listed from the bound of `past` on; what ended by then goes into `past`. */
function listedProduct(
  productKey: string,
  records: readonly PriceRecord[],
  past: LatestTwo,
): ListedProduct | undefined {
  const parts = parseProductKey(productKey);
  if (!parts) return undefined; // the database refuses such keys; never publish one
  const prices: PriceRecord[] = [];
  for (const record of records) {
    if (record.organizationId !== null) continue;
    if (record.validUntil === null || !past.consider(record.validUntil)) prices.push(record);
    else past.consider(record.validFrom);
  }
  if (prices.length === 0) return undefined;
  return {
    productKey,
    family: parts.familyOrder,
    sortKey: naturalKey(productKey).sortKey,
    prices: prices.sort(byValidFrom),
    entries: prices.map(entryBytes),
  };
}

function inListOrder(a: ListedProduct, b: ListedProduct): number {
  return (
    a.family - b.family || compareCodePoints(a.sortKey, b.sortKey) || compareCodePoints(a.productKey, b.productKey)
  );
}

/** The public list at one instant. */
export interface ListAt {
  readonly at: number;
  /** The list prices in force at `at`, in the document's order (rule 1 of section 1). */
  readonly prices: readonly PriceRecord[];
  /** The family (its place in section 2.4) of each of `prices`. */
  readonly families: readonly number[];
  /** The entry of each of `prices`, serialized (entryBytes). */
  readonly entries: readonly Buffer[];
  /** `last_changed` (docs/decisions.md): `null` only when nothing was ever priced. */
  readonly lastChanged: number | null;
  /** The change of the list before `lastChanged`, for If-Modified-Since. */
  readonly previousChange: number | null;
  /** The next instant at which the list changes by itself; Infinity when none is scheduled. */
  readonly nextChange: number;
}

/**
 * The public list at `at` (not before `list.from`): the list prices in force, `last_changed` (the
 * latest write, `valid_from` or `valid_until` not after `at`) and the next instant at which the
 * list changes by itself. One pass over what the list holds, in steps.
 */
export function* listAt(list: PublicList, at: number): Steps<ListAt> {
  const changes = new LatestTwo(at);
  for (const instant of list.past) changes.consider(instant);
  let next = Infinity;
  for (const write of list.writes) {
    if (!changes.consider(write) && write < next) next = write;
  }
  const prices: PriceRecord[] = [];
  const families: number[] = [];
  const entries: Buffer[] = [];
  for (const [i, product] of list.products.entries()) {
    for (const [j, record] of product.prices.entries()) {
      if (isInForce(record, at)) {
        prices.push(record);
        families.push(product.family);
        entries.push(product.entries[j]);
      }
      if (!changes.consider(record.validFrom) && record.validFrom < next) next = record.validFrom;
      const until = record.validUntil;
      if (until !== null && !changes.consider(until) && until < next) next = until;
    }
    if ((i & 1023) === 1023) yield;
  }
  const [latest = null, previous = null] = changes.values().reverse();
  return { at, prices, families, entries, lastChanged: latest, previousChange: previous, nextChange: next };
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

/** The two latest distinct instants not after a bound, among those it is shown. */
class LatestTwo {
  private first = -Infinity;
  private second = -Infinity;

  constructor(private readonly bound: number) {}

  /** Whether `ms` is within the bound (kept, or earlier than the two kept). */
  consider(ms: number): boolean {
    if (ms > this.bound) return false;
    if (ms === this.first || ms <= this.second) return true;
    if (ms > this.first) [this.second, this.first] = [this.first, ms];
    else this.second = ms;
    return true;
  }

  /** Ascending: [previous, latest], fewer when fewer were shown. */
  values(): number[] {
    return [this.second, this.first].filter((ms) => ms !== -Infinity);
  }
}
