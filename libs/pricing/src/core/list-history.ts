import { firstIndexWhere } from './bisect';
import { parseProductKey } from '../catalogue/catalogue';
import { compareCodePoints, naturalKey } from '../catalogue/natural-order';
import { listEntry } from './price-list';
import { isInForce, type PriceRecord } from './price-record';
import type { Steps } from './slices';

// The public list's past (docs/decisions.md, "Prices as they were"): each list price as the list
// knew it over time — from the write that recorded it, with the ends later writes set, moved or
// withdrew — so that the list at any past instant is what was served then (a backfill recorded
// later is not in it; an end set later is not shown), and every change of the list has an instant.

/** A write of list prices, from the change log: its instant, the record it set, the ends it set. */
export interface ListWrite {
  readonly at: number;
  /** The list price this write recorded, with its end as written then. */
  readonly set?: { readonly id: number; readonly validUntil: number | null };
  /** Ends this write set, moved or withdrew (null: reopened). */
  readonly ends?: readonly { readonly id: number; readonly validUntil: number | null }[];
}

/** A list price as the list knew it: from when, and with which end from each instant on. */
export interface KnownPrice {
  readonly record: PriceRecord;
  readonly knownFrom: number;
  /** Ascending by `from`; the first is from `knownFrom`. */
  readonly ends: readonly { readonly from: number; readonly validUntil: number | null }[];
}

/**
 * Each list price of `records` as the list knew it, by product key, from the writes of the change
 * log (`writes`, in log order). A record no write recorded (written before the log kept what
 * writes did, or by hand) is known from its `recordedAt`, with its end as stored.
 */
export function* knownPrices(
  records: Iterable<PriceRecord>,
  writes: readonly ListWrite[],
): Steps<Map<string, KnownPrice[]>> {
  const setBy = new Map<number, { at: number; validUntil: number | null }>();
  const endsOf = new Map<number, { from: number; validUntil: number | null }[]>();
  let n = 0;
  for (const write of writes) {
    if ((++n & 1023) === 0) yield;
    if (write.set && !setBy.has(write.set.id))
      setBy.set(write.set.id, { at: write.at, validUntil: write.set.validUntil });
    for (const end of write.ends ?? []) {
      const ends = endsOf.get(end.id);
      if (ends) ends.push({ from: write.at, validUntil: end.validUntil });
      else endsOf.set(end.id, [{ from: write.at, validUntil: end.validUntil }]);
    }
  }
  const byKey = new Map<string, KnownPrice[]>();
  for (const record of records) {
    if ((++n & 1023) === 0) yield;
    if (record.organizationId !== null) continue;
    const set = setBy.get(record.id);
    const later = endsOf.get(record.id) ?? [];
    // A list price read without when it was recorded (none the snapshot reads) counts from its start.
    const knownFrom = set?.at ?? record.recordedAt ?? record.validFrom;
    const first = set ? set.validUntil : later.length > 0 ? null : record.validUntil;
    const known: KnownPrice = { record, knownFrom, ends: [{ from: knownFrom, validUntil: first }, ...later] };
    const prices = byKey.get(record.productKey);
    if (prices) prices.push(known);
    else byKey.set(record.productKey, [known]);
  }
  return byKey;
}

/** `price` as the list knew it at `at`: with the end it had then; `undefined` before it was recorded. */
export function knownAt(price: KnownPrice, at: number): PriceRecord | undefined {
  if (price.knownFrom > at) return undefined;
  let validUntil = price.ends[0].validUntil;
  for (const end of price.ends) if (end.from <= at) validUntil = end.validUntil;
  return validUntil === price.record.validUntil ? price.record : { ...price.record, validUntil };
}

/** The list prices of every key as the list knew them at `at`. */
export function* recordsKnownAt(prices: ReadonlyMap<string, readonly KnownPrice[]>, at: number): Steps<PriceRecord[]> {
  const records: PriceRecord[] = [];
  for (const known of prices.values()) {
    for (const price of known) {
      const record = knownAt(price, at);
      if (record) records.push(record);
    }
    if ((records.length & 1023) === 1023) yield;
  }
  return records;
}

/** A change of the public list: the entry of one product just before `at` and from `at` on. */
export interface ListChange {
  readonly at: number;
  readonly productKey: string;
  readonly family: number;
  readonly sortKey: string;
  readonly before: PriceRecord | null;
  readonly after: PriceRecord | null;
}

/**
 * Every change of one product's entry in the list, oldest first: at each instant at which a price
 * of it was recorded, took effect, ended, or had its end set or moved, the entry before and after,
 * when they differ (the list shows entries as section 2.3 of the API document says).
 */
export function productChanges(productKey: string, prices: readonly KnownPrice[]): ListChange[] {
  const parts = parseProductKey(productKey);
  if (!parts) return []; // the database refuses such keys; never publish one
  const instants = new Set<number>();
  for (const price of prices) {
    instants.add(price.knownFrom).add(price.record.validFrom);
    for (const end of price.ends) {
      instants.add(end.from);
      if (end.validUntil !== null) instants.add(end.validUntil);
    }
  }
  const changes: ListChange[] = [];
  const sortKey = naturalKey(productKey).sortKey;
  let before: { record: PriceRecord; entry: string } | null = null;
  for (const at of [...instants].sort((a, b) => a - b)) {
    const record = entryAt(prices, at);
    const entry = record && JSON.stringify(listEntry(record));
    if ((entry ?? null) === (before?.entry ?? null)) continue;
    changes.push({
      at,
      productKey,
      family: parts.familyOrder,
      sortKey,
      before: before?.record ?? null,
      after: record ?? null,
    });
    before = record && entry ? { record, entry } : null;
  }
  return changes;
}

/** The entry of a product at `at`: its price in force then, as the list knew it. */
function entryAt(prices: readonly KnownPrice[], at: number): PriceRecord | undefined {
  for (const price of prices) {
    const record = knownAt(price, at);
    if (record && isInForce(record, at)) return record;
  }
  return undefined;
}

/** The order of the change feed: by instant, then product keys in the list's order. */
export function inFeedOrder(a: FeedPlace, b: FeedPlace): number {
  return (
    a.at - b.at ||
    a.family - b.family ||
    compareCodePoints(a.sortKey, b.sortKey) ||
    compareCodePoints(a.productKey, b.productKey)
  );
}

/** Where a change stands in the feed. */
type FeedPlace = Pick<ListChange, 'at' | 'family' | 'sortKey' | 'productKey'>;

/** A place in the change feed: just after the change of `productKey` at `at` ('' for before every key). */
export interface FeedPosition {
  readonly at: number;
  readonly productKey: string;
}

/** The index of the first change of `changes` (in feed order) after `position`. */
export function indexAfter(changes: readonly ListChange[], position: FeedPosition): number {
  const parts = position.productKey === '' ? undefined : parseProductKey(position.productKey);
  const place: FeedPlace = {
    at: position.at,
    productKey: position.productKey,
    family: parts ? parts.familyOrder : -1,
    sortKey: parts ? naturalKey(position.productKey).sortKey : '',
  };
  return firstIndexWhere(changes, (change) => inFeedOrder(change, place) > 0);
}

/** The index of the first of `sorted` (ascending) greater than `at`. */
export function countUpTo(sorted: readonly number[], at: number): number {
  return firstIndexWhere(sorted, (instant) => instant > at);
}
