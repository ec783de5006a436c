import { recordsAsRecordedAt } from '../core/as-recorded';
import { EndTable } from '../core/end-table';
import { ListHistory, type FeedPosition, type ListChange } from '../core/list-history';
import { priceListDocument, type ListAt, type PriceListDocument } from '../core/price-list';
import { byValidFrom, isInForce, priceInForceAt, type PriceRecord } from '../core/price-record';
import { OverlaidMap } from '../core/overlaid-map';
import { inSlices, runNow, type Steps } from '../core/slices';
import { recordProblem } from '../core/record-rules';
import type { ApplicablePrices } from '../core/usage';
import type { PriceBookHead, PricingChanges, PricingData, RecordsRead } from '../database/pricing-data';
import { renderPriceList, renderPriceListNow, type PriceListResponse } from '../rendering/price-list-response';

/** The lists of the instants at which the list changes are prepared this long ahead of them. */
export const PREPARE_AHEAD_MS = 5_000;
/** At most this many lists are prepared ahead at once (changes a few milliseconds apart). */
const MAX_PREPARED = 4;

/**
 * The feed of the list's history is hashed once a snapshot is shown (PriceBookLoader): a chain of
 * five years of changes takes seconds, and the list is served before it.
 */
const HASHED_LATER = { hashed: false };

/**
 * A feed of at most this many changes is hashed before its first snapshot is shown (about a
 * second at most): hashed later, its work met the first change after start-up, which then took
 * 580–695 ms instead of about 500 at 100,000 list prices (docs/benchmarks.md, "The list's past").
 */
export const HASHED_AT_ONCE = 250_000;

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

interface Parts extends PriceBookHead {
  /** Kept by every snapshot made from this one with changes; a new one after a full read. */
  readonly lineage: number;
  readonly prices: OverlaidMap<string, ProductPrices>;
  /** The ends each record had before, where its end changed (core/as-recorded.ts). */
  readonly ends: EndTable;
  /**
   * The latest instant at which a record held was recorded or its end changed: the book as
   * recorded at this instant or later is the book held.
   */
  readonly latestWrite: number;
  readonly recordCount: number;
  readonly availability: ReadonlyMap<string, boolean>;
  /**
   * The public list over time (core/list-history.ts): shared by every snapshot of the lineage and
   * extended by each change from its publication instant on, which none has served yet.
   */
  readonly history: ListHistory;
  /** The history's revision this snapshot holds: a later one changed the list from ListHistory.changedSince on. */
  readonly revision: number;
  /** The list's answers prepared for consecutive instants, ascending: each expires as the next starts. */
  readonly lists: readonly PriceListResponse[];
  readonly hasOrganizationPrices: boolean;
  /**
   * Set while the list's past is not held (a first read of its present, PricingData.present): the
   * list is right from `heldFrom` on, and the past read next with `listWrites` makes it whole.
   */
  readonly present?: { readonly cut: number; readonly heldFrom: number; readonly listWrites: readonly number[] };
}

/**
 * The prices held in memory: every record indexed for lookups at any instant (billing prices past
 * intervals), availability, the public list's history (its past and what is scheduled), and the
 * list's answers prepared for now and the instants at which it changes next. Reading it has no
 * effects; the loader (price-book-loader.ts) makes a new one on every change and as time passes,
 * and swaps it in. A change makes a new snapshot that shares every product key it does not touch,
 * and extends the history from the change's publication instant on.
 */
export class PricingSnapshot {
  private constructor(private readonly parts: Parts) {}

  /** The snapshot of `data`, its list prepared from `now` on. */
  static async build(data: PricingData, now: number): Promise<PricingSnapshot> {
    await inSlices(refuseBroken(data.records));
    const byKey = new Map<string, ProductPrices>();
    await inSlices(addRecords(byKey, data.records));
    const prices = OverlaidMap.of(byKey);
    const latestWrite = await inSlices(latestWriteOf(data, -Infinity));
    const ends = EndTable.of(data.ends);
    const history = await inSlices(
      ListHistory.build(
        {
          records: listRecords(prices.values()),
          ends,
          writes: data.listWrites,
          lastChangeId: Number(data.lastChangeId),
        },
        HASHED_LATER,
      ),
    );
    // The feed of a present alone is not the list's: never hashed, never served (heldFrom).
    if (!data.present && history.changeCount <= HASHED_AT_ONCE) await inSlices(history.hashFeed());
    const snapshot = new PricingSnapshot({
      lineage: ++lineages,
      prices,
      ends,
      latestWrite,
      recordCount: data.records.length,
      availability: data.availability,
      history,
      revision: history.revision,
      lists: [],
      version: data.version,
      lastChangeId: data.lastChangeId,
      lastChangedAt: data.lastChangedAt,
      hasOrganizationPrices: data.listOnly !== true,
      ...(data.present && { present: { ...data.present, listWrites: data.listWrites } }),
    });
    return snapshot.preparedFor(now);
  }

  /**
   * This snapshot (of the list's present alone: `heldFrom`) made whole with `data` (read after it:
   * the list prices it left, and every organization's price): the snapshot of everything, at the
   * same head, so that the changes since it are read next. Its list from `heldFrom` on is the same.
   */
  async withPastAndOrganizationPrices(data: RecordsRead, now: number): Promise<PricingSnapshot> {
    const { present, ...held } = this.parts;
    if (!present) throw new Error('the snapshot holds the whole past already');
    const records = [...listRecords(held.prices.values()), ...data.records];
    return PricingSnapshot.build(
      {
        version: held.version,
        lastChangeId: held.lastChangeId,
        lastChangedAt: held.lastChangedAt,
        readAt: -Infinity,
        marginMs: 0,
        records,
        ends: held.ends.with(EndTable.of(data.ends)),
        listWrites: present.listWrites,
        availability: held.availability,
      },
      now,
    );
  }

  /**
   * This snapshot (of list prices only) with every organization's price of `data` (read after it,
   * organizations' prices alone): the same history and head, so that the changes since it are read
   * next (their product keys' records, in every scope, replace these).
   */
  async withOrganizationPrices(data: RecordsRead): Promise<PricingSnapshot> {
    await inSlices(refuseBroken(data.records));
    const agreed = await inSlices(listPricesOfKeys(this.parts.prices, data.records));
    await inSlices(addRecords(agreed, data.records));
    return new PricingSnapshot({
      ...this.parts,
      prices: await inSlices(this.parts.prices.with(agreed)),
      ends: this.parts.ends.with(EndTable.of(data.ends)),
      latestWrite: await inSlices(latestWriteOf(data, this.parts.latestWrite)),
      recordCount: this.parts.recordCount + data.records.length,
      hasOrganizationPrices: true,
    });
  }

  /**
   * This snapshot with `changes` applied, its list prepared from `now` on; `undefined` when the
   * changes do not follow it exactly (another starting point, an entry read last that the log no
   * longer holds as it was, a version that moved by more than the writes read, a record count other
   * than the database's), so that the caller reads everything again. The history is extended from
   * the changes' publication instant on: the lists prepared for earlier instants stay as they are.
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
    await inSlices(refuseBroken(changes.records));
    const changed = new Set(changes.productKeys);
    // The changed keys' records are all read again, with their ends (ends are only ever added: an
    // id of a record withdrawn since is never asked for).
    const ends = held.ends.with(EndTable.of(changes.ends));
    const replaced = new Map<string, ProductPrices | undefined>([...changed].map((key) => [key, undefined]));
    await inSlices(addRecords(replaced, changes.records));
    const prices = await inSlices(held.prices.with(replaced));
    const byId = new Map(changes.records.map((record) => [record.id, record]));
    await inSlices(held.history.extend(changes.listLog, byId, HASHED_LATER));
    // From where the list differs from what this snapshot prepared (the same changes applied
    // before, through a snapshot that was never shown, count too).
    const from = held.history.changedSince(held.revision);
    return new PricingSnapshot({
      ...held,
      prices,
      ends,
      latestWrite: await inSlices(latestWriteOf(changes, held.latestWrite)),
      revision: held.history.revision,
      recordCount,
      availability: changes.availability,
      // What was prepared stays right until the history changed.
      lists: held.lists.flatMap((list) =>
        list.builtForMs >= from ? [] : [list.expiresAtMs > from ? { ...list, expiresAtMs: from } : list],
      ),
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
      const list = await renderPriceList(this.parts.history.listAt(instant, true));
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
    return renderPriceListNow(this.parts.history.listAt(now));
  }

  /** The public document at any instant, as the list shows it then (the past, or what is scheduled). */
  documentAt(at: number): PriceListDocument {
    return priceListDocument(runNow(this.parts.history.listAt(at)));
  }

  /**
   * The public document at `at` of the book as recorded at `asRecordedAt` (core/as-recorded.ts):
   * its list prices recorded by then, with the ends they had then, in force at `at`; `last_changed`
   * the latest instant up to `at` at which one of them started or ended. Made when asked for, from
   * the list prices (a billing read, never a request of the public list).
   */
  documentAsRecordedAt(at: number, asRecordedAt: number): PriceListDocument {
    const list: PriceRecord[] = [];
    for (const product of this.parts.prices.values()) {
      for (const record of this.asRecorded(product.list, asRecordedAt)) {
        // As the book holds it then, it was always known: the list's past of this book alone.
        list.push({ ...record, recordedAt: undefined });
      }
    }
    const history = runNow(
      ListHistory.build({ records: list, ends: new Map(), writes: [], lastChangeId: 0 }, HASHED_LATER),
    );
    return priceListDocument(runNow(history.listAt(at)));
  }

  /**
   * The instant from which the list's history is held: -Infinity once the whole past is; a first
   * read of the present alone (PricingData.present) holds it from its second latest write on. The
   * list, its answers and list prices before it are not known yet, nor is the feed.
   */
  get heldFrom(): number {
    return this.parts.present?.heldFrom ?? -Infinity;
  }

  /** Where the past read next starts (PriceSnapshotReads.loadPastAndOrganizationPrices); undefined once held. */
  get presentCut(): number | undefined {
    return this.parts.present?.cut;
  }

  /** The public list's history, which `/at/{instant}` and `/changes` read (snapshot/past-answers.ts). */
  get history(): ListHistory {
    return this.parts.history;
  }

  /** The public list at the version in force at `at`, for `/at/{instant}`: in steps. */
  pastList(at: number): Steps<ListAt> {
    const version = this.parts.history.versionAt(at);
    return this.parts.history.listAt(Number.isFinite(version) ? version : at);
  }

  /** The changes of the list after `position` with instants before `before`, at most `limit`: in steps. */
  changesAfter(position: FeedPosition, limit: number, before: number): Steps<{ changes: ListChange[]; more: boolean }> {
    return this.parts.history.changesAfter(position, limit, before);
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

  /** The instant of that change (epoch ms), `null` when the log is empty. */
  get lastChangedAt(): number | null {
    return this.parts.lastChangedAt;
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

  /**
   * The latest instant at which the book held changed (a record recorded, an end set): the book as
   * recorded at any instant from it on is the book held, read without a copy.
   */
  get latestWrite(): number {
    return this.parts.latestWrite;
  }

  /**
   * The list price of `productKey` in force at `at`, in the book as recorded at `asRecordedAt`
   * (default: as held): O(log n) in the key's history, O(n) for a past the book has changed since.
   */
  listPriceAt(productKey: string, at: number, asRecordedAt = Infinity): PriceRecord | undefined {
    const list = this.parts.prices.get(productKey)?.list;
    return list && priceInForceAt(this.asRecorded(list, asRecordedAt), at);
  }

  /** The price agreed with `organizationId` for `productKey`, in force at `at`, as listPriceAt. */
  organizationPriceAt(
    productKey: string,
    organizationId: string,
    at: number,
    asRecordedAt = Infinity,
  ): PriceRecord | undefined {
    const agreed = this.parts.prices.get(productKey)?.organizations?.get(organizationId);
    if (agreed === undefined) return undefined;
    if (!Array.isArray(agreed) && asRecordedAt >= this.parts.latestWrite)
      return isInForce(agreed, at) ? agreed : undefined;
    return priceInForceAt(this.asRecorded([agreed].flat(), asRecordedAt), at);
  }

  /**
   * The records that may price usage of `productKey`: its list prices, and the organization's, in
   * the book as recorded at `asRecordedAt` (default: as held).
   */
  applicablePrices(productKey: string, organizationId?: string, asRecordedAt = Infinity): ApplicablePrices {
    const prices = this.parts.prices.get(productKey);
    const agreed = organizationId === undefined ? undefined : prices?.organizations?.get(organizationId);
    return {
      list: this.asRecorded(prices?.list ?? [], asRecordedAt),
      organization: agreed === undefined ? [] : this.asRecorded([agreed].flat(), asRecordedAt),
    };
  }

  /** `records` (of one key and scope) as recorded at `asRecordedAt`: themselves when the book has not changed since. */
  private asRecorded(records: readonly PriceRecord[], asRecordedAt: number): readonly PriceRecord[] {
    return asRecordedAt >= this.parts.latestWrite
      ? records
      : recordsAsRecordedAt(records, this.parts.ends, asRecordedAt);
  }

  /** Availability is data: a product not marked otherwise is on sale. */
  isOnSale(productKey: string): boolean {
    return this.parts.availability.get(productKey) ?? true;
  }
}

/**
 * Stored prices that break the book's rules (core/record-rules.ts): a load that reads one makes
 * no snapshot, so that the last good one is served (PriceBookLoader says why).
 */
export class BrokenRecordsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(
      `stored prices break the book's rules: ${problems.slice(0, 3).join('; ')}` +
        (problems.length > 3 ? `; and ${problems.length - 3} more` : ''),
    );
    this.name = 'BrokenRecordsError';
  }
}

/** Throws BrokenRecordsError naming every record of `records` that breaks the book's rules, in steps. */
function* refuseBroken(records: readonly PriceRecord[]): Steps<void> {
  const problems: string[] = [];
  for (const [i, record] of records.entries()) {
    const problem = recordProblem(record);
    if (problem !== undefined)
      problems.push(`record ${record.id} (${JSON.stringify(record.productKey).slice(0, 80)}): ${problem}`);
    if ((i & 4095) === 4095) yield;
  }
  if (problems.length > 0) throw new BrokenRecordsError(problems);
}

/**
 * Indexes `records` (in any order) by key and scope, each scope sorted: into `prices` without
 * those keys yet, or, organizations' prices alone, beside the list prices of a copy of each key's
 * entry (listPricesOfKeys: a list held there is shared, never pushed to).
 */
function* addRecords(prices: Map<string, ProductPrices | undefined>, records: readonly PriceRecord[]): Steps<void> {
  // The scopes of more than one record, to be sorted.
  const scopes = new Set<PriceRecord[]>();
  for (const [i, record] of records.entries()) {
    const entry = prices.get(record.productKey);
    if (record.organizationId === null) {
      // A list of its one record, at its length: an empty one grown by a push holds room for 16.
      if (!entry) prices.set(record.productKey, { list: [record] });
      else if (entry.list.push(record) === 2) scopes.add(entry.list);
    } else {
      const held = entry ?? { list: [] };
      if (!entry) prices.set(record.productKey, held);
      held.organizations ??= new Map();
      const agreed = held.organizations.get(record.organizationId);
      if (agreed === undefined) held.organizations.set(record.organizationId, record);
      else if (Array.isArray(agreed)) agreed.push(record);
      else {
        const scope = [agreed, record];
        held.organizations.set(record.organizationId, scope);
        scopes.add(scope);
      }
    }
    if ((i & 255) === 255) yield;
  }
  let n = 0;
  for (const scope of scopes) {
    if (scope.length > 1) scope.sort(byValidFrom);
    if ((++n & 1023) === 0) yield;
  }
}

/**
 * The entries of `prices` of the keys of `records`, their list prices alone, in a new map (in steps):
 * what organizations' prices are added to; the other keys are shared. Every key copied, 100,000 list
 * prices without an organization's held the event loop 48 ms at an instance's start.
 */
function* listPricesOfKeys(
  prices: OverlaidMap<string, ProductPrices>,
  records: readonly PriceRecord[],
): Steps<Map<string, ProductPrices>> {
  const entries = new Map<string, ProductPrices>();
  for (const [i, { productKey }] of records.entries()) {
    const held = entries.has(productKey) ? undefined : prices.get(productKey);
    if (held) entries.set(productKey, { list: held.list });
    if ((i & 1023) === 1023) yield;
  }
  return entries;
}

function* listRecords(products: Iterable<ProductPrices>): Generator<PriceRecord> {
  for (const product of products) yield* product.list;
}

function countRecords(product: ProductPrices | undefined): number {
  let count = product?.list.length ?? 0;
  for (const agreed of product?.organizations?.values() ?? []) count += Array.isArray(agreed) ? agreed.length : 1;
  return count;
}

/** The latest of `latest` and the instants at which `read`'s records were recorded or their ends changed. */
function* latestWriteOf(read: RecordsRead, latest: number): Steps<number> {
  for (const [i, record] of read.records.entries()) {
    if (record.recordedAt !== undefined && record.recordedAt > latest) latest = record.recordedAt;
    if ((i & 16383) === 16383) yield;
  }
  return Math.max(latest, EndTable.of(read.ends).latestFrom);
}
