import { firstIndexWhere } from '../core/bisect';
import {
  listAt,
  priceListDocument,
  publicList,
  withProducts,
  type ListAt,
  type PriceListDocument,
  type PublicList,
} from '../core/price-list';
import {
  countUpTo,
  indexAfter,
  inFeedOrder,
  knownPrices,
  productChanges,
  recordsKnownAt,
  type FeedPosition,
  type KnownPrice,
  type ListChange,
  type ListWrite,
} from '../core/list-history';
import { byValidFrom, isInForce, priceInForceAt, type PriceRecord } from '../core/price-record';
import { inSlices, mergeInSteps, runNow, sortInSteps, type Steps } from '../core/slices';
import type { ApplicablePrices } from '../core/usage';
import type { PriceBookHead, PricingChanges, PricingData } from '../database/pricing-data';
import { renderPriceList, renderPriceListNow, type PriceListResponse } from '../rendering/price-list-response';

/** The lists of the instants at which the list changes are prepared this long ahead of them. */
export const PREPARE_AHEAD_MS = 5_000;
/** At most this many lists are prepared ahead at once (changes a few milliseconds apart). */
const MAX_PREPARED = 4;

/** One product key's prices: the list's and each organization's, each sorted by `validFrom`. */
interface ProductPrices {
  readonly list: PriceRecord[];
  /**
   * Each organization's prices of the key: the one record itself where there is one (most agree
   * one price per key, and an array around each costs memory at a million records), else its
   * records sorted by `validFrom`.
   */
  organizations?: Map<string, PriceRecord | PriceRecord[]>;
}

/** Numbers the snapshots of one reading of the whole book: a full read starts a new lineage. */
let lineages = 0;

interface Parts {
  /** Kept by every snapshot made from this one with changes; a new one after a full read. */
  readonly lineage: number;
  readonly prices: ReadonlyMap<string, ProductPrices>;
  readonly recordCount: number;
  readonly availability: ReadonlyMap<string, boolean>;
  readonly publicList: PublicList;
  /** The list's answers prepared for consecutive instants, ascending: each expires as the next starts. */
  readonly lists: readonly PriceListResponse[];
  /** What each write of list prices did, in log order. */
  readonly listLog: readonly ListWrite[];
  /** Every list write's instant, ascending: `last_changed`, and a document before `publicList.from`. */
  readonly writes: readonly number[];
  /** Each list price as the list knew it over time, by product key. */
  readonly known: ReadonlyMap<string, readonly KnownPrice[]>;
  /** Every change of the list, in feed order (by instant, then the list's order). */
  readonly feed: readonly ListChange[];
  readonly version: string;
  readonly lastChangeId: string;
  readonly lastChangedAt: number | null;
  readonly hasOrganizationPrices: boolean;
}

/**
 * The prices held in memory, as one immutable value: every record indexed for lookups at any
 * instant (billing prices past intervals), availability, the public list from now on, and its
 * answers prepared for now and the instants at which it changes next. Reading it has no effects;
 * the loader (price-book-loader.ts) makes a new one on every change and as time passes, and swaps
 * it in. A change makes a new snapshot that shares every product key it does not touch, and their
 * entries keep their serialized bytes (rendering/price-list-response.ts).
 */
export class PricingSnapshot {
  private constructor(private readonly parts: Parts) {}

  /** The snapshot of `data`, its list prepared from `now` on. */
  static async build(data: PricingData, now: number): Promise<PricingSnapshot> {
    const prices = new Map<string, ProductPrices>();
    await inSlices(addRecords(prices, data.records));
    const known = await inSlices(knownPrices(listRecords(prices.values()), data.listLog));
    const snapshot = new PricingSnapshot({
      lineage: ++lineages,
      prices,
      recordCount: data.records.length,
      availability: data.availability,
      publicList: await inSlices(publicList(listRecords(prices.values()), data.listWrites, now)),
      lists: [],
      listLog: data.listLog,
      writes: [...data.listWrites].sort((a, b) => a - b),
      known,
      feed: await inSlices(feedOf(known, known.keys(), [])),
      version: data.version,
      lastChangeId: data.lastChangeId,
      lastChangedAt: data.lastChangedAt,
      hasOrganizationPrices: data.listOnly !== true,
    });
    return snapshot.preparedFor(now);
  }

  /**
   * This snapshot with `changes` applied, its list prepared from `now` on; `undefined` when the
   * changes do not follow it exactly (another starting point, an entry read last that the log no
   * longer holds as it was, a version that moved by more than the writes read, a record count
   * other than the database's), so that the caller reads everything again.
   */
  async withChanges(changes: PricingChanges, now: number): Promise<PricingSnapshot | undefined> {
    const held = this.parts;
    if (!held.hasOrganizationPrices || changes.sinceChangeId !== held.lastChangeId) return undefined;
    // The entry read last is not in the log as it was: a restore lost it, or gave its id to another.
    if (changes.sinceChangedAt !== held.lastChangedAt) return undefined;
    if (BigInt(changes.version) - BigInt(held.version) !== BigInt(changes.writeCount)) return undefined;
    let recordCount = held.recordCount + changes.records.length;
    for (const productKey of changes.productKeys) recordCount -= countRecords(held.prices.get(productKey));
    if (recordCount !== changes.recordCount) return undefined;
    const prices = await inSlices(copyWithout(held.prices, new Set(changes.productKeys)));
    await inSlices(addRecords(prices, changes.records));
    const changed = new Map(changes.productKeys.map((key) => [key, prices.get(key)?.list ?? []]));
    const from = Math.max(now, held.publicList.from);
    const listLog = [...held.listLog, ...changes.listLog];
    const known = await inSlices(copyWithout(held.known, new Set(changes.productKeys)));
    const changedKnown = await inSlices(knownPrices([...changed.values()].flat(), listLog));
    for (const [productKey, knownOfKey] of changedKnown) known.set(productKey, knownOfKey);
    return new PricingSnapshot({
      ...held,
      prices,
      recordCount,
      availability: changes.availability,
      publicList: await inSlices(withProducts(held.publicList, changed, changes.listWrites, from)),
      lists: [],
      listLog,
      writes: [...held.writes, ...changes.listWrites].sort((a, b) => a - b),
      known,
      feed: await inSlices(feedOf(known, changes.productKeys, held.feed)),
      version: changes.version,
      lastChangeId: changes.lastChangeId,
      lastChangedAt: changes.lastChangedAt,
    }).preparedFor(now);
  }

  /**
   * This snapshot with its list's answers prepared for `now` and every instant within
   * PREPARE_AHEAD_MS after it at which the list changes (those prepared before are kept).
   */
  async preparedFor(now: number): Promise<PricingSnapshot> {
    const lists = this.parts.lists.filter((list) => list.expiresAtMs > now);
    if (lists.length > 0 && lists[0].builtForMs > now) lists.length = 0; // a clock set back
    let instant = lists.length > 0 ? lists[lists.length - 1].expiresAtMs : now;
    while (instant <= now + PREPARE_AHEAD_MS && lists.length < MAX_PREPARED) {
      const list = await renderPriceList(this.listAt(instant));
      lists.push(list);
      instant = list.expiresAtMs;
    }
    return new PricingSnapshot({ ...this.parts, lists });
  }

  /** When the list's answers should be prepared again (`preparedFor`); Infinity when never. */
  get preparedUntil(): number {
    const lists = this.parts.lists;
    return lists.length === 0 ? -Infinity : lists[lists.length - 1].expiresAtMs - PREPARE_AHEAD_MS;
  }

  /**
   * The answers of `GET /v1/pricing` at `now`: the list prepared for it, or, when none covers it
   * (the clock passed the lists prepared before the loader's timer fired), the list rendered now,
   * in the plain coding only. Never an outdated list.
   */
  priceListAt(now: number): PriceListResponse {
    for (const list of this.parts.lists) if (list.builtForMs <= now && now < list.expiresAtMs) return list;
    return renderPriceListNow(this.listAt(now));
  }

  /** The public document at any instant. */
  documentAt(at: number): PriceListDocument {
    return priceListDocument(runNow(this.listAt(at)));
  }

  /**
   * The instant from which the list served at `at` was served unchanged: the last change of an
   * entry or write of list prices not after `at` (-Infinity before any). The list at `at` is the
   * list at that instant, byte for byte (core/list-history.ts).
   */
  pastListKey(at: number): number {
    const { writes, feed } = this.parts;
    const changes = changesUpTo(feed, at);
    const lastWrite = countUpTo(writes, at);
    return Math.max(changes > 0 ? feed[changes - 1].at : -Infinity, lastWrite > 0 ? writes[lastWrite - 1] : -Infinity);
  }

  /** The public list as it was served at `at` (in the past): as the list knew its prices then, in steps. */
  *pastList(at: number): Steps<ListAt> {
    const records = yield* recordsKnownAt(this.parts.known, at);
    const writes = this.parts.writes.slice(0, countUpTo(this.parts.writes, at));
    return yield* listAt(yield* publicList(records, writes, at), at);
  }

  /**
   * The changes of the list after `position` with instants before `before` (those that no write
   * can precede any more), at most `limit`; `more` when more such changes follow.
   */
  changesAfter(position: FeedPosition, limit: number, before: number): { changes: ListChange[]; more: boolean } {
    const { feed } = this.parts;
    const start = indexAfter(feed, position);
    const end = changesUpTo(feed, before - 1);
    const stop = Math.min(end, start + limit);
    return { changes: feed.slice(start, stop), more: stop < end };
  }

  get version(): string {
    return this.parts.version;
  }

  /** The same for every snapshot made from the same full read of the book (see Parts). */
  get lineage(): number {
    return this.parts.lineage;
  }

  get lastChangeId(): string {
    return this.parts.lastChangeId;
  }

  /** Whether this snapshot holds the prices as stored at `head` (PriceSnapshotReads.readHead). */
  isAt(head: PriceBookHead): boolean {
    const { version, lastChangeId, lastChangedAt } = this.parts;
    return head.version === version && head.lastChangeId === lastChangeId && head.lastChangedAt === lastChangedAt;
  }

  /** The price records held. */
  get recordCount(): number {
    return this.parts.recordCount;
  }

  /**
   * Whether organizations' prices are held too; `false` for the list prices an instance reads
   * first at start-up (price-book-loader.ts), which serve the public list, list prices and
   * availability, never an organization's lookup.
   */
  get hasOrganizationPrices(): boolean {
    return this.parts.hasOrganizationPrices;
  }

  /** The list price of `productKey` in force at `at`: O(log n) in the key's history. */
  listPriceAt(productKey: string, at: number): PriceRecord | undefined {
    const list = this.parts.prices.get(productKey)?.list;
    return list && priceInForceAt(list, at);
  }

  /** The price agreed with `organizationId` for `productKey`, in force at `at`: O(log n). */
  organizationPriceAt(productKey: string, organizationId: string, at: number): PriceRecord | undefined {
    const agreed = this.parts.prices.get(productKey)?.organizations?.get(organizationId);
    if (agreed === undefined || Array.isArray(agreed)) return agreed && priceInForceAt(agreed, at);
    return isInForce(agreed, at) ? agreed : undefined;
  }

  /** The records that may price usage of `productKey`: its list prices, and the organization's. */
  applicablePrices(productKey: string, organizationId?: string): ApplicablePrices {
    const prices = this.parts.prices.get(productKey);
    const agreed = organizationId === undefined ? undefined : prices?.organizations?.get(organizationId);
    return { list: prices?.list ?? [], organization: agreed === undefined ? [] : [agreed].flat() };
  }

  /** Availability is data: a product not marked otherwise is on sale. */
  isOnSale(productKey: string): boolean {
    return this.parts.availability.get(productKey) ?? true;
  }

  /** The public list at `at`: from what can still be listed, or, before that, from all of history. */
  private *listAt(at: number): Steps<ListAt> {
    const { publicList: list, prices, writes } = this.parts;
    return yield* listAt(at >= list.from ? list : yield* publicList(listRecords(prices.values()), writes, at), at);
  }
}

/** Indexes `records` (of keys not in `prices` yet, in any order) by key and scope, each scope sorted. */
function* addRecords(prices: Map<string, ProductPrices>, records: readonly PriceRecord[]): Steps<void> {
  const scopes: PriceRecord[][] = [];
  for (const [i, record] of records.entries()) {
    let entry = prices.get(record.productKey);
    if (!entry) {
      prices.set(record.productKey, (entry = { list: [] }));
      scopes.push(entry.list);
    }
    if (record.organizationId === null) entry.list.push(record);
    else {
      entry.organizations ??= new Map();
      const agreed = entry.organizations.get(record.organizationId);
      if (agreed === undefined) entry.organizations.set(record.organizationId, record);
      else if (Array.isArray(agreed)) agreed.push(record);
      else {
        const scope = [agreed, record];
        entry.organizations.set(record.organizationId, scope);
        scopes.push(scope);
      }
    }
    if ((i & 1023) === 1023) yield;
  }
  for (const [i, scope] of scopes.entries()) {
    if (scope.length > 1) scope.sort(byValidFrom);
    if ((i & 1023) === 1023) yield;
  }
}

/** `prices` without the product keys in `left`, copied in steps: a book may hold a hundred thousand keys. */
function* copyWithout<V>(prices: ReadonlyMap<string, V>, left: ReadonlySet<string>): Steps<Map<string, V>> {
  const copy = new Map<string, V>();
  let n = 0;
  for (const [productKey, product] of prices) {
    if (!left.has(productKey)) copy.set(productKey, product);
    if ((++n & 1023) === 0) yield;
  }
  return copy;
}

/** How many changes of `feed` have instants not after `at`. */
function changesUpTo(feed: readonly ListChange[], at: number): number {
  return firstIndexWhere(feed, (change) => change.at > at);
}

/**
 * The feed after a change of the product keys `changed`: their changes anew (from `known`),
 * merged into `feed` without theirs. In steps: a book of a hundred thousand list prices has as many
 * changes at least.
 */
function* feedOf(
  known: ReadonlyMap<string, readonly KnownPrice[]>,
  changed: Iterable<string>,
  feed: readonly ListChange[],
): Steps<ListChange[]> {
  const keys = new Set(changed);
  const fresh: ListChange[] = [];
  let n = 0;
  for (const productKey of keys) {
    const prices = known.get(productKey);
    if (prices) for (const change of productChanges(productKey, prices)) fresh.push(change);
    if ((++n & 255) === 0) yield;
  }
  const kept = keys.size === 0 ? feed : feed.filter((change) => !keys.has(change.productKey));
  return yield* mergeInSteps(kept, yield* sortInSteps(fresh, inFeedOrder), inFeedOrder);
}

function* listRecords(products: Iterable<ProductPrices>): Generator<PriceRecord> {
  for (const product of products) yield* product.list;
}

function countRecords(product: ProductPrices | undefined): number {
  let count = product?.list.length ?? 0;
  for (const agreed of product?.organizations?.values() ?? []) count += Array.isArray(agreed) ? agreed.length : 1;
  return count;
}
