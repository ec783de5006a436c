import { firstIndexWhere } from '../core/bisect';
import { formatInstant } from '../core/instant';
import { byValidFrom, isInForce, type PriceRecord } from '../core/price-record';
import { compareCodePoints } from '../catalogue/natural-order';
import type { AvailabilityEntry, PriceBook, PriceBookEntry } from './price-book';
import { quoteValue } from '../errors/bounded-text';

/** A price to insert: a record-to-be (no id yet); `supersededBy` points at another insert of the same plan. */
export interface PlannedInsert extends Pick<
  PriceRecord,
  'productKey' | 'organizationId' | 'unitType' | 'unitCount' | 'amount' | 'validFrom'
> {
  validUntil: number | null;
  supersededBy: number | null;
  /** `validFrom` is the write's instant (`now`): its entry has no `valid_from`. */
  readonly startsAtApply: boolean;
  /** `validUntil` is the write's instant: another entry without `valid_from` ends this price. */
  endsAtApply: boolean;
}

/**
 * An existing open price given an end: by a scheduled change, at the change's `valid_from`
 * (`supersededBy` its insert), or by an entry that restates it with a `valid_until` (an end of its
 * own: `supersededBy` null, no record added, the price keeps its `valid_from`).
 */
export interface PlannedEnd {
  readonly id: number;
  /** Epoch milliseconds: the `validFrom` of the insert that ends it (the write's instant when that one startsAtApply), or the entry's `valid_until`. */
  readonly validUntil: number;
  /** Index of the insert that ends it; null for an end of its own. */
  readonly supersededBy: number | null;
  /** The record as stored, before this end. */
  readonly record: PriceRecord;
}

export interface ImportPlan {
  readonly inserts: readonly PlannedInsert[];
  readonly ends: readonly PlannedEnd[];
  readonly availability: readonly AvailabilityEntry[];
  /** Entries of the book (prices and products) that restate what is recorded. */
  readonly unchanged: number;
}

export type PlannedImport = { readonly plan: ImportPlan } | { readonly errors: readonly string[] };

/** Called with the number of price entries planned so far, every few thousand and at the end. */
export type PlanningProgress = (planned: number) => void;

export function planChangesNothing(plan: ImportPlan): boolean {
  return plan.inserts.length === 0 && plan.ends.length === 0 && plan.availability.length === 0;
}

/**
 * A price of one key and scope while the plan is built: stored, or planned by this book. Its end
 * may still be set by a later entry.
 */
interface Slot extends Pick<PriceRecord, 'unitType' | 'unitCount' | 'amount' | 'validFrom'> {
  readonly stored: PriceRecord | null;
  readonly newIndex: number | null;
  validUntil: number | null;
  /** A later price ends it: a stored successor, or an insert of this plan. */
  superseded: boolean;
}

/**
 * The prices of one key and scope. Prices of a scope never overlap, so ordered by `valid_from`
 * their ends are ordered too (an open price can only be the last): `stored` is searched by
 * bisection. Entries are planned in `valid_from` order, so the prices this book adds come in
 * order as well, and only the last of them can overlap, restate or precede the next entry.
 */
interface Scope {
  readonly stored: Slot[];
  lastAdded: Slot | null;
}

const PROGRESS_EVERY = 5_000;
/** Overlapping prices named in a refusal; the rest are counted. */
const OVERLAPS_NAMED = 3;

/**
 * Plans a price book against the stored prices at `now`, epoch milliseconds (docs/decisions.md,
 * "The price book"):
 * - an entry that restates a stored price changes nothing;
 * - a `valid_from` in the past is allowed only where the key had no record in that scope;
 * - a price starting inside the window of an open price of the same key and scope ends it
 *   at its `valid_from`; any other overlap is refused.
 * Entries of one key and scope apply in `valid_from` order, so the order in the file does not
 * matter; two of them where one ends as the next starts are a scheduled change. Returns every
 * refusal, named by entry, or a plan; never a partial plan. O(n log n) in entries and records.
 */
export function planImport(
  book: PriceBook,
  stored: readonly PriceRecord[],
  availability: ReadonlyMap<string, boolean>,
  now: number,
  progress?: PlanningProgress,
  pricedProducts?: ReadonlySet<string>,
): PlannedImport {
  const errors: string[] = [];
  const scopes = new Map<string, Scope>();
  for (const record of stored) {
    const key = scopeKey(record.productKey, record.organizationId);
    const slot: Slot = {
      stored: record,
      newIndex: null,
      unitType: record.unitType,
      unitCount: record.unitCount,
      amount: record.amount,
      validFrom: record.validFrom,
      validUntil: record.validUntil,
      superseded: record.supersededBy !== null,
    };
    const scope = scopes.get(key);
    if (scope) scope.stored.push(slot);
    else scopes.set(key, { stored: [slot], lastAdded: null });
  }
  for (const scope of scopes.values()) scope.stored.sort(byValidFrom);

  const inserts: PlannedInsert[] = [];
  const ends: PlannedEnd[] = [];
  let unchanged = 0;
  const entries = [...book.prices].sort(
    (a, b) =>
      compareCodePoints(scopeKey(a.productKey, a.organizationId), scopeKey(b.productKey, b.organizationId)) ||
      (a.validFrom ?? now) - (b.validFrom ?? now) ||
      a.index - b.index,
  );

  for (const [done, entry] of entries.entries()) {
    if (progress && done % PROGRESS_EVERY === 0) progress(done);
    const path = `prices[${entry.index}]`;
    const key = scopeKey(entry.productKey, entry.organizationId);
    let scope = scopes.get(key);
    if (!scope) scopes.set(key, (scope = { stored: [], lastAdded: null }));
    const last = scope.lastAdded;

    if ((last && restates(entry, last, now)) || restatesStored(entry, scope.stored, now)) {
      unchanged++;
      continue;
    }
    // The terms of a stored price with an end it has not: that end is set, and nothing else.
    const ended = storedItEnds(entry, scope.stored, now);
    if (ended) {
      const until = entry.validUntil!;
      if (ended.validUntil !== null && ended.validUntil <= now) {
        errors.push(
          `${path}.valid_until: the recorded price ${describeTerms(ended)} ended at ${formatInstant(ended.validUntil)}; ` +
            `an end that took effect cannot move`,
        );
      } else if (ended.validUntil !== null) {
        errors.push(
          `${path}.valid_until: the recorded price ${describeTerms(ended)} ends at ${formatInstant(ended.validUntil)} ` +
            `already; an end is moved by withdrawing it first (withdraw --valid-until ${formatInstant(ended.validUntil)}), ` +
            `then setting the new one`,
        );
      } else if (until < now) {
        errors.push(
          `${path}.valid_until: ${formatInstant(until)} is before this write takes effect (${formatInstant(now)}); ` +
            `an end is set to then or later`,
        );
      } else if (until <= ended.validFrom) {
        errors.push(
          `${path}.valid_until: ${formatInstant(until)} must be after valid_from (${formatInstant(ended.validFrom)})`,
        );
      } else {
        ended.validUntil = until;
        ends.push({ id: ended.stored!.id, validUntil: until, supersededBy: null, record: ended.stored! });
      }
      continue;
    }

    const from = entry.validFrom ?? now;
    const until = entry.validUntil;
    if (until !== null && until <= from) {
      errors.push(
        `${path}.valid_until: ${formatInstant(until)} must be after valid_from (${formatInstant(from)}, now)`,
      );
      continue;
    }
    if (from < now && scope.stored.length > 0) {
      errors.push(
        `${path}.valid_from: ${formatInstant(from)} is in the past and ${describeScope(entry)} already has prices; ` +
          `a change starts now or later (omit valid_from to start now), only a key without records may be backfilled`,
      );
      continue;
    }
    const { named, total } = storedOverlapping(scope.stored, from, until);
    const overlapCount = total + (last && overlaps(last, from, until) ? 1 : 0);
    if (overlapCount > total) named.push(last!);
    const open = named[0];
    const endsOpenPrice = overlapCount === 1 && open.validUntil === null && open.validFrom < from;
    if (overlapCount > 0 && !endsOpenPrice) {
      const more = overlapCount - Math.min(named.length, OVERLAPS_NAMED);
      errors.push(
        `${path}: overlaps ${named.slice(0, OVERLAPS_NAMED).map(describeSlot).join(' and ')}` +
          `${more > 0 ? ` and ${more} more` : ''} of ${describeScope(entry)}; ` +
          `only a price with no end can be ended by a later one (withdraw a scheduled price or end first)`,
      );
      continue;
    }
    const newIndex = inserts.length;
    // The insert and the scope's last price are two objects: each end is set on both.
    const terms = { unitType: entry.unitType, unitCount: entry.unitCount, amount: entry.amount };
    const span = { validFrom: from, validUntil: until };
    // Which instants are the write's own is kept as such (a reviewed plan names them, not their value).
    const startsAtApply = entry.validFrom === null;
    inserts.push({
      productKey: entry.productKey,
      organizationId: entry.organizationId,
      ...terms,
      ...span,
      supersededBy: null,
      startsAtApply,
      endsAtApply: false,
    });
    // A price of this book that ends where this one starts is a scheduled change written out
    // (as an export writes it): link them, as if this one had ended it.
    if (last && last.newIndex !== null && !last.superseded && last.validUntil === from) {
      last.superseded = true;
      inserts[last.newIndex].supersededBy = newIndex;
    }
    if (endsOpenPrice) {
      open.validUntil = from;
      open.superseded = true;
      if (open.newIndex !== null) {
        inserts[open.newIndex].validUntil = from;
        inserts[open.newIndex].endsAtApply = startsAtApply;
        inserts[open.newIndex].supersededBy = newIndex;
      } else if (open.stored !== null) {
        ends.push({ id: open.stored.id, validUntil: from, supersededBy: newIndex, record: open.stored });
      }
    }
    scope.lastAdded = { stored: null, newIndex, ...terms, ...span, superseded: false };
  }
  progress?.(entries.length);

  // A product is known by a price (recorded in any scope, or in this book) or an availability of
  // its own; any other key of `products` is a typo, refused as an unknown key of `prices` is.
  if (pricedProducts !== undefined) {
    const bookKeys = new Set(book.prices.map((entry) => entry.productKey));
    for (const product of book.products) {
      const key = product.productKey;
      if (pricedProducts.has(key) || bookKeys.has(key) || availability.has(key)) continue;
      errors.push(
        `products[${product.index}].product_key: ${quoteValue(key)} is no product: it has no price, recorded or in ` +
          `this book, and no availability (a typo? availability is set for a priced product)`,
      );
    }
  }
  const availabilityChanges = book.products.filter(
    (product) => (availability.get(product.productKey) ?? true) !== product.onSale,
  );
  unchanged += book.products.length - availabilityChanges.length;
  if (errors.length > 0) return { errors: errors.sort(compareByEntry) };
  return { plan: { inserts, ends, availability: availabilityChanges, unchanged } };
}

/**
 * An entry restates a price with the same unit and amount and the same window. An entry
 * without `valid_from` restates the price in force now. An entry with no end also restates a
 * price that a later scheduled change ended, so re-applying a book changes nothing.
 */
function restates(entry: PriceBookEntry, slot: Slot, now: number): boolean {
  if (slot.unitType !== entry.unitType || slot.unitCount !== entry.unitCount || slot.amount !== entry.amount) {
    return false;
  }
  const startMatches = entry.validFrom === null ? isInForce(slot, now) : slot.validFrom === entry.validFrom;
  const endMatches =
    entry.validUntil === null ? slot.validUntil === null || slot.superseded : slot.validUntil === entry.validUntil;
  return startMatches && endMatches;
}

/** The one stored price an entry could restate: the one starting at its `valid_from`, or in force now. */
function restatesStored(entry: PriceBookEntry, stored: readonly Slot[], now: number): boolean {
  const slot = storedAt(entry, stored, now);
  return slot !== undefined && restates(entry, slot, now);
}

/** The last stored price starting at or before the entry's `valid_from` (or now, without one). */
function storedAt(entry: PriceBookEntry, stored: readonly Slot[], now: number): Slot | undefined {
  const at = entry.validFrom ?? now;
  const i = firstIndexWhere(stored, (slot) => slot.validFrom > at) - 1;
  return i >= 0 ? stored[i] : undefined;
}

/**
 * The stored price whose end an entry sets (docs/decisions.md, "Ends"): an entry with a
 * `valid_until` and the terms of a stored price that no later price ends, starting at the entry's
 * `valid_from` (without one: the price in force now). Its end is the entry's `valid_until`: no record
 * is added, and the price keeps its `valid_from`. A price that has an end already is returned too,
 * for the message that says how to move one.
 */
function storedItEnds(entry: PriceBookEntry, stored: readonly Slot[], now: number): Slot | undefined {
  if (entry.validUntil === null) return undefined;
  const slot = storedAt(entry, stored, now);
  if (slot === undefined || slot.stored === null || slot.superseded) return undefined;
  if (slot.unitType !== entry.unitType || slot.unitCount !== entry.unitCount || slot.amount !== entry.amount) {
    return undefined;
  }
  const starts = entry.validFrom === null ? isInForce(slot, now) : slot.validFrom === entry.validFrom;
  return starts ? slot : undefined;
}

function describeTerms(slot: Slot): string {
  return `${slot.amount} per ${slot.unitCount} ${slot.unitType} from ${formatInstant(slot.validFrom)}`;
}

/** The stored prices that overlap [from, until): the first few, and how many in all. */
function storedOverlapping(
  stored: readonly Slot[],
  from: number,
  until: number | null,
): { named: Slot[]; total: number } {
  const first = firstIndexWhere(stored, (slot) => slot.validUntil === null || slot.validUntil > from);
  const end = until === null ? stored.length : firstIndexWhere(stored, (slot) => slot.validFrom >= until);
  const total = Math.max(0, end - first);
  return { named: stored.slice(first, first + Math.min(total, OVERLAPS_NAMED)), total };
}

function overlaps(slot: Slot, from: number, until: number | null): boolean {
  const startsBeforeEnd = until === null || slot.validFrom < until;
  const endsAfterStart = slot.validUntil === null || slot.validUntil > from;
  return startsBeforeEnd && endsAfterStart;
}

function scopeKey(productKey: string, organizationId: string | null): string {
  return `${organizationId ?? ''}\u0000${productKey}`;
}

function describeScope(entry: PriceBookEntry): string {
  return entry.organizationId === null
    ? `list price ${entry.productKey}`
    : `${entry.productKey} for organization ${entry.organizationId}`;
}

function describeSlot(slot: Slot): string {
  const until = slot.validUntil ? formatInstant(slot.validUntil) : 'no end';
  const origin = slot.stored !== null ? 'the recorded price' : 'the price';
  return `${origin} ${slot.amount} per ${slot.unitCount} ${slot.unitType} from ${formatInstant(slot.validFrom)} until ${until}`;
}

/** Orders messages by entry: `products` first, then `prices`, each by number (`prices[2]` before `prices[10]`). */
function compareByEntry(a: string, b: string): number {
  const n = (s: string): number => Number(/^\w+\[(\d+)\]/.exec(s)?.[1] ?? -1);
  const products = (s: string): number => (s.startsWith('products[') ? 0 : 1);
  return products(a) - products(b) || n(a) - n(b) || compareCodePoints(a, b);
}
