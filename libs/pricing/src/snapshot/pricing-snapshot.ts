import { compactListHistory, type ListedRecord, type ListPriceHistory } from '../core/build-price-list';
import type { PricingChanges, PricingData } from '../database/pricing-data';
import { byValidFrom, isInForce, priceInForceAt, type PriceRecord } from '../core/price-record';
import type { ApplicablePrices } from '../core/usage';
import { runInSlices, runNow, type Steps } from './slices';

/**
 * One product key's prices: the list price history and each organization's (when any has one),
 * each sorted by `validFrom` (lookups bisect them: held-price.ts).
 */
interface ProductPrices {
  readonly list: PriceRecord[];
  /**
   * Each organization's prices of the key: the one record itself where there is one (most agree
   * one price per key; an array around each cost about 56 bytes a record at a million records,
   * docs/benchmarks.md, "A large price book"), else its records sorted by `validFrom`.
   */
  organizations?: Map<string, PriceRecord | PriceRecord[]>;
}

/** An organization's prices of a key as a list (see ProductPrices). */
function scopeList(held: PriceRecord | PriceRecord[] | undefined): readonly PriceRecord[] | undefined {
  return held === undefined || Array.isArray(held) ? held : [held];
}

/** A snapshot's contents; `listWrites` holds every list write, for the list before `listableFrom`. */
export interface SnapshotParts extends Omit<PricingData, 'records'> {
  readonly prices: ReadonlyMap<string, ProductPrices>;
  readonly recordCount: number;
  /** What the public list needs from `listableFrom` on (compactListHistory). */
  readonly listHistory: ListPriceHistory;
  readonly listableFrom: Date;
}

/** Items between two pause points of a rebuild (see slices.ts). */
const STEP = 2_000;

/**
 * Prices and availability held in memory. Lookups at any instant read the whole history
 * (billing prices past intervals); the public list reads only `listHistory`: the prices in
 * force or scheduled when the snapshot was made, and what `last_changed` needs. A change read
 * from the database replaces the records of the product keys it names (`withChanges`): ended
 * history is read once, at start, and never again.
 */
export class PricingSnapshot {
  /** Made by `of`, `build` and `withChanges`. */
  constructor(private readonly parts: SnapshotParts) {}

  /** The snapshot of `data`, its public list compacted at `instant`, built at once. */
  static of(data: PricingData, instant: Date): PricingSnapshot {
    return runNow(buildSnapshot(data, instant));
  }

  /** As `of`, in slices that leave the event loop free for requests between them. */
  static build(data: PricingData, instant: Date): Promise<PricingSnapshot> {
    return runInSlices(buildSnapshot(data, instant));
  }

  /**
   * This snapshot with `changes` applied, its public list compacted at `instant`, built in
   * slices; `undefined` when the changes do not follow this snapshot exactly (another starting
   * point, a version that moved by more than the writes read, a record count that differs from
   * the database's), so that the caller reads everything again instead.
   */
  async withChanges(changes: PricingChanges, instant: Date): Promise<PricingSnapshot | undefined> {
    if (this.parts.listOnly || changes.sinceChangeId !== this.parts.lastChangeId) return undefined;
    if (BigInt(changes.version) - BigInt(this.parts.version) !== BigInt(changes.writeCount)) return undefined;
    const updated = await runInSlices(applyChanges(this.parts, changes, instant));
    return updated.parts.recordCount === changes.recordCount ? updated : undefined;
  }

  get version(): string {
    return this.parts.version;
  }

  get lastChangeId(): string {
    return this.parts.lastChangeId;
  }

  /** The price records held. */
  get recordCount(): number {
    return this.parts.recordCount;
  }

  /**
   * Whether organizations' prices are held too; `false` for the list prices an instance reads
   * first at start-up (snapshot/price-book-loader.ts), which serve the public list, list prices
   * and availability, never an organization's lookup.
   */
  get hasOrganizationPrices(): boolean {
    return !this.parts.listOnly;
  }

  /** The public list's history, valid from `listableFrom` on. */
  get listHistory(): ListPriceHistory {
    return this.parts.listHistory;
  }

  get listableFrom(): Date {
    return this.parts.listableFrom;
  }

  /** What the public list at `instant` is built from: the compact history, or, before it, all of it. */
  listHistoryAt(instant: Date): ListPriceHistory {
    if (instant >= this.parts.listableFrom) return this.parts.listHistory;
    const records: PriceRecord[] = [];
    for (const prices of this.parts.prices.values()) for (const record of prices.list) records.push(record);
    return { records, writes: this.parts.listWrites };
  }

  /** The list price of `productKey` in force at `instant`: O(log n) in the key's history. */
  listPriceAt(productKey: string, instant: Date): PriceRecord | undefined {
    const list = this.parts.prices.get(productKey)?.list;
    return list && priceInForceAt(list, instant.getTime());
  }

  /** The price agreed with `organizationId` for `productKey`, in force at `instant`: O(log n). */
  organizationPriceAt(productKey: string, organizationId: string, instant: Date): PriceRecord | undefined {
    const agreed = this.parts.prices.get(productKey)?.organizations?.get(organizationId);
    if (agreed === undefined || Array.isArray(agreed)) return agreed && priceInForceAt(agreed, instant.getTime());
    return isInForce(agreed, instant.getTime()) ? agreed : undefined;
  }

  /** The records that may price usage of `productKey`: its list prices, and the organization's. */
  applicablePrices(productKey: string, organizationId?: string): ApplicablePrices {
    const prices = this.parts.prices.get(productKey);
    return {
      list: prices?.list ?? [],
      organization: (organizationId !== undefined && scopeList(prices?.organizations?.get(organizationId))) || [],
    };
  }

  /** Availability is data: a product not marked otherwise is on sale. */
  isOnSale(productKey: string): boolean {
    return this.parts.availability.get(productKey) ?? true;
  }
}

function* buildSnapshot(data: PricingData, instant: Date): Steps<PricingSnapshot> {
  const prices = new Map<string, ProductPrices>();
  const listRecords: PriceRecord[] = [];
  yield* addRecords(prices, data.records, listRecords);
  const listHistory = yield* compactInSteps(listRecords, data.listWrites, instant);
  return new PricingSnapshot({
    prices,
    recordCount: data.records.length,
    availability: data.availability,
    listWrites: data.listWrites,
    listHistory,
    listableFrom: instant,
    version: data.version,
    lastChangeId: data.lastChangeId,
    listOnly: data.listOnly,
  });
}

function* applyChanges(held: SnapshotParts, changes: PricingChanges, instant: Date): Steps<PricingSnapshot> {
  const written = new Set(changes.productKeys);
  const prices = new Map<string, ProductPrices>();
  let recordCount = held.recordCount;
  let n = 0;
  for (const [productKey, entry] of held.prices) {
    if (!written.has(productKey)) prices.set(productKey, entry);
    else
      recordCount -=
        entry.list.length + sum(entry.organizations?.values() ?? [], (held) => (Array.isArray(held) ? held.length : 1));
    if (++n % STEP === 0) yield;
  }
  const listable: ListedRecord[] = [];
  for (const record of held.listHistory.records) {
    if (!written.has(record.productKey)) listable.push(record);
    if (++n % STEP === 0) yield;
  }
  const newListRecords: PriceRecord[] = [];
  yield* addRecords(prices, changes.records, newListRecords);
  for (const record of newListRecords) listable.push(record);
  const listHistory = yield* compactInSteps(listable, [...held.listHistory.writes, ...changes.listWrites], instant);
  return new PricingSnapshot({
    prices,
    recordCount: recordCount + changes.records.length,
    availability: changes.availability,
    listWrites: [...held.listWrites, ...changes.listWrites],
    listHistory,
    listableFrom: instant,
    version: changes.version,
    lastChangeId: changes.lastChangeId,
  });
}

/**
 * Indexes `records` (new keys of `prices`, in any order) by product key and scope into `prices`,
 * each scope sorted by `validFrom`; list prices are also added to `list`.
 */
function* addRecords(
  prices: Map<string, ProductPrices>,
  records: readonly PriceRecord[],
  list: PriceRecord[],
): Steps<void> {
  const scopes: PriceRecord[][] = [];
  let n = 0;
  for (const record of records) {
    let entry = prices.get(record.productKey);
    if (!entry) {
      prices.set(record.productKey, (entry = { list: [] }));
      scopes.push(entry.list);
    }
    if (record.organizationId === null) {
      entry.list.push(record);
      list.push(record);
    } else {
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
    if (++n % STEP === 0) yield;
  }
  for (const scope of scopes) {
    if (scope.length > 1) scope.sort(byValidFrom);
    if (++n % STEP === 0) yield;
  }
}

/** compactListHistory a part at a time: compacting the parts one after the other gives the same. */
function* compactInSteps(
  records: readonly ListedRecord[],
  writes: readonly number[],
  instant: Date,
): Steps<ListPriceHistory> {
  const kept: ListedRecord[] = [];
  let summary = writes;
  for (let start = 0; start === 0 || start < records.length; start += STEP) {
    const part = compactListHistory({ records: records.slice(start, start + STEP), writes: summary }, instant);
    for (const record of part.records) kept.push(record);
    summary = part.writes;
    yield;
  }
  return { records: kept, writes: summary };
}

function sum<T>(items: Iterable<T>, value: (item: T) => number): number {
  let total = 0;
  for (const item of items) total += value(item);
  return total;
}
