import { PRODUCT_FAMILIES, parseProductKey, type DimensionName, type UnitType } from '../catalogue/catalogue';
import { sortNatural } from '../catalogue/natural-order';
import { formatInstant } from './instant';
import { isInForce, type PriceRecord } from './price-record';

/** The public document of `GET /v1/pricing` (section 2). */
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

/** What the public list reads of a price record. */
export type ListedRecord = Pick<
  PriceRecord,
  'productKey' | 'organizationId' | 'unitType' | 'unitCount' | 'amount' | 'validFrom' | 'validUntil'
>;

/** What the price list is computed from: list prices only, and when they were written. */
export interface ListPriceHistory {
  /** List price records (organization prices are never given to the public list). */
  readonly records: readonly ListedRecord[];
  /**
   * Instants at which list prices were set, changed, ended or withdrawn (the change log). A
   * compacted history (compactListHistory) also carries here the instants of the ended prices
   * it left out of `records`.
   */
  readonly writes: readonly number[];
}

/**
 * The price list at `instant` (docs/price-list-api.md): list prices in force (section 1, rule 1),
 * families in the order of 2.4 and only when they have a price (2.1), prices in natural
 * product-key order (2.2).
 */
export function buildPriceList(history: ListPriceHistory, instant: Date): PriceListDocument {
  const byFamily = new Map<number, PriceListEntry[]>();
  const formatted = new Map<number, string>(); // many prices share their instants
  const format = (ms: number): string => {
    let text = formatted.get(ms);
    if (text === undefined) formatted.set(ms, (text = formatInstant(new Date(ms))));
    return text;
  };
  const t = instant.getTime();
  for (const record of history.records) {
    if (record.organizationId !== null || !isInForce(record, t)) continue;
    const parts = parseProductKey(record.productKey);
    if (!parts) continue; // the database refuses such keys; never publish one
    const entry: PriceListEntry = {
      product_key: record.productKey,
      ...(parts.dimensions && { dimensions: parts.dimensions }),
      unit_type: record.unitType,
      unit_count: record.unitCount,
      amount: record.amount,
      valid_from: format(record.validFrom),
      valid_until: record.validUntil === null ? null : format(record.validUntil),
    };
    const entries = byFamily.get(parts.familyOrder);
    if (entries) entries.push(entry);
    else byFamily.set(parts.familyOrder, [entry]);
  }
  const families: PriceListFamily[] = [];
  PRODUCT_FAMILIES.forEach((family, order) => {
    const prices = byFamily.get(order);
    if (prices) families.push({ family: family.family, prices: sortNatural(prices, (p) => p.product_key) });
  });
  const lastChanged = lastChangedAt(history, instant);
  return {
    currency: 'EUR',
    amounts_exclude_vat: true,
    last_changed: lastChanged && formatInstant(lastChanged),
    families,
  };
}

/**
 * `last_changed`: the latest instant, not after `instant`, at which a list price was written
 * (set, changed, ended or withdrawn), took effect (`valid_from`) or ended (`valid_until`).
 * `null` only when nothing was ever priced.
 */
export function lastChangedAt(history: ListPriceHistory, instant: Date): Date | null {
  return listChangesAt(history, instant).latest;
}

/**
 * The latest change of the list not after `instant` (`last_changed`), and the one before it:
 * If-Modified-Since needs both, as HTTP dates have whole seconds.
 */
export function listChangesAt(
  history: ListPriceHistory,
  instant: Date,
): { latest: Date | null; previous: Date | null } {
  const changes = new LatestTwo(instant.getTime());
  for (const write of history.writes) changes.consider(write);
  for (const record of history.records) {
    if (record.organizationId !== null) continue;
    changes.consider(record.validFrom);
    changes.consider(record.validUntil);
  }
  return { latest: changes.latest(), previous: changes.previous() };
}

/**
 * What the list needs of `history` from `from` on: the list prices in force or scheduled (an
 * ended price is never listed again) and, for `last_changed` and If-Modified-Since, the two
 * latest change instants up to `from` plus every write after it. At any instant not before
 * `from`, the list, its changes and its next transition are those of the whole history; so a
 * rebuild scans only what can still be listed, however long the history grows.
 */
export function compactListHistory(history: ListPriceHistory, from: Date): ListPriceHistory {
  const past = new LatestTwo(from.getTime());
  const writes: number[] = [];
  for (const write of history.writes) {
    if (!past.consider(write)) writes.push(write); // a write after `from`: a change still to come
  }
  const records: ListedRecord[] = [];
  for (const record of history.records) {
    if (record.organizationId !== null) continue;
    if (record.validUntil === null || !past.consider(record.validUntil)) records.push(record);
    else past.consider(record.validFrom);
  }
  const summary = [past.previous(), past.latest()].flatMap((d) => (d === null ? [] : [d.getTime()]));
  return { records, writes: [...summary, ...writes] };
}

/** The two latest distinct instants not after a bound, among those it is shown. */
class LatestTwo {
  private first = -Infinity;
  private second = -Infinity;

  constructor(private readonly bound: number) {}

  /** Whether `ms` is within the bound (counted, or earlier than the two kept). */
  consider(ms: number | null): boolean {
    if (ms === null || ms > this.bound) return false;
    if (ms === this.first || ms <= this.second) return true;
    if (ms > this.first) [this.second, this.first] = [this.first, ms];
    else this.second = ms;
    return true;
  }

  latest(): Date | null {
    return this.first === -Infinity ? null : new Date(this.first);
  }

  previous(): Date | null {
    return this.second === -Infinity ? null : new Date(this.second);
  }
}

/**
 * The first instant after `instant` at which the price list changes by itself: a scheduled
 * price takes effect, a price ends, or a write stamped by the database's clock a little ahead
 * of ours comes into `last_changed`. `null` when there is none.
 */
export function nextTransitionAfter(history: ListPriceHistory, instant: Date): Date | null {
  const t = instant.getTime();
  let next = Infinity;
  for (const at of history.writes) {
    if (at > t && at < next) next = at;
  }
  for (const record of history.records) {
    if (record.organizationId !== null) continue;
    const from = record.validFrom;
    if (from > t && from < next) next = from;
    const until = record.validUntil;
    if (until !== null && until > t && until < next) next = until;
  }
  return next === Infinity ? null : new Date(next);
}

/**
 * How many prices the list at `instant` holds (list prices in force), without rendering it.
 * Keys are checked by the database, so every record in force is published.
 */
export function countListPrices(history: ListPriceHistory, instant: Date): number {
  let count = 0;
  const t = instant.getTime();
  for (const record of history.records) if (record.organizationId === null && isInForce(record, t)) count++;
  return count;
}
