import { formatInstant } from '../price-list/instant';
import type { PriceRecord } from '../price-list/price-record';
import { compareCodePoints } from '../catalogue/natural-order';
import type { AvailabilityEntry, PriceBook, PriceBookEntry } from './price-book';

/** A price to insert; `supersededBy` points at another insert of the same plan. */
export interface PlannedInsert {
  readonly productKey: string;
  readonly organizationId: string | null;
  readonly unitType: PriceRecord['unitType'];
  readonly unitCount: number;
  readonly amount: string;
  readonly validFrom: Date;
  validUntil: Date | null;
  supersededBy: number | null;
}

/** An existing open price that a scheduled change ends at the change's `valid_from`. */
export interface PlannedEnd {
  readonly id: string;
  readonly validUntil: Date;
  /** Index of the insert that ends it. */
  readonly supersededBy: number;
}

export interface ImportPlan {
  readonly inserts: readonly PlannedInsert[];
  readonly ends: readonly PlannedEnd[];
  readonly availability: readonly AvailabilityEntry[];
}

export type PlannedImport = { readonly plan: ImportPlan } | { readonly errors: readonly string[] };

export function planChangesNothing(plan: ImportPlan): boolean {
  return plan.inserts.length === 0 && plan.ends.length === 0 && plan.availability.length === 0;
}

/** A price of one key and scope while the plan is built: stored, or planned by this book. */
interface Slot {
  readonly existingId: string | null;
  readonly newIndex: number | null;
  readonly unitType: string;
  readonly unitCount: number;
  readonly amount: string;
  readonly validFrom: Date;
  validUntil: Date | null;
  supersededBy: string | number | null;
}

/**
 * Plans a price book against the stored prices at `now` (design.md, "Price book CLI"):
 * - an entry that restates a stored price changes nothing;
 * - a `valid_from` in the past is allowed only where the key had no record in that scope;
 * - a price starting inside the window of an open price of the same key and scope ends it
 *   at its `valid_from`; any other overlap is refused.
 * Entries of one key and scope apply in `valid_from` order, so the order in the file does not
 * matter; two of them where one ends as the next starts are a scheduled change. Returns every
 * refusal, named by entry, or a plan; never a partial plan.
 */
export function planImport(
  book: PriceBook,
  stored: readonly PriceRecord[],
  availability: ReadonlyMap<string, boolean>,
  now: Date,
): PlannedImport {
  const errors: string[] = [];
  const slots = new Map<string, Slot[]>();
  for (const record of stored) {
    const slot: Slot = {
      existingId: record.id,
      newIndex: null,
      unitType: record.unitType,
      unitCount: record.unitCount,
      amount: record.amount,
      validFrom: record.validFrom,
      validUntil: record.validUntil,
      supersededBy: record.supersededBy,
    };
    const key = scopeKey(record.productKey, record.organizationId);
    const list = slots.get(key);
    if (list) list.push(slot);
    else slots.set(key, [slot]);
  }
  const hadRecords = new Set(slots.keys());

  const inserts: PlannedInsert[] = [];
  const ends = new Map<string, PlannedEnd>();
  const entries = [...book.prices].sort(
    (a, b) =>
      compareCodePoints(scopeKey(a.productKey, a.organizationId), scopeKey(b.productKey, b.organizationId)) ||
      (a.validFrom ?? now).getTime() - (b.validFrom ?? now).getTime() ||
      a.index - b.index,
  );

  for (const entry of entries) {
    const path = `prices[${entry.index}]`;
    const key = scopeKey(entry.productKey, entry.organizationId);
    const scopeSlots = slots.get(key) ?? [];
    slots.set(key, scopeSlots);

    if (scopeSlots.some((slot) => restates(entry, slot, now))) continue;

    const from = entry.validFrom ?? now;
    const until = entry.validUntil;
    if (until !== null && until.getTime() <= from.getTime()) {
      errors.push(
        `${path}.valid_until: ${formatInstant(until)} must be after valid_from (${formatInstant(from)}, now)`,
      );
      continue;
    }
    if (from.getTime() < now.getTime() && hadRecords.has(key)) {
      errors.push(
        `${path}.valid_from: ${formatInstant(from)} is in the past and ${describeScope(entry)} already has prices; ` +
          `a change starts now or later (omit valid_from to start now), only a key without records may be backfilled`,
      );
      continue;
    }
    const overlapping = scopeSlots.filter((slot) => overlaps(slot, from, until));
    const open = overlapping[0];
    const endsOpenPrice =
      overlapping.length === 1 && open.validUntil === null && open.validFrom.getTime() < from.getTime();
    if (overlapping.length > 0 && !endsOpenPrice) {
      errors.push(
        `${path}: overlaps ${overlapping.map(describeSlot).join(' and ')} of ${describeScope(entry)}; ` +
          `only a price with no end can be ended by a later one (withdraw a scheduled price or end first)`,
      );
      continue;
    }
    const newIndex = inserts.length;
    inserts.push({
      productKey: entry.productKey,
      organizationId: entry.organizationId,
      unitType: entry.unitType,
      unitCount: entry.unitCount,
      amount: entry.amount,
      validFrom: from,
      validUntil: until,
      supersededBy: null,
    });
    // A price of this book that ends where this one starts is a scheduled change written out
    // (as an export writes it): link them, as if this one had ended it.
    const predecessor = scopeSlots.find(
      (slot) => slot.newIndex !== null && slot.supersededBy === null && slot.validUntil?.getTime() === from.getTime(),
    );
    if (predecessor && predecessor.newIndex !== null) {
      predecessor.supersededBy = newIndex;
      inserts[predecessor.newIndex].supersededBy = newIndex;
    }
    if (endsOpenPrice) {
      open.validUntil = from;
      open.supersededBy = newIndex;
      if (open.newIndex !== null) {
        inserts[open.newIndex].validUntil = from;
        inserts[open.newIndex].supersededBy = newIndex;
      } else if (open.existingId !== null) {
        ends.set(open.existingId, { id: open.existingId, validUntil: from, supersededBy: newIndex });
      }
    }
    scopeSlots.push({
      existingId: null,
      newIndex,
      unitType: entry.unitType,
      unitCount: entry.unitCount,
      amount: entry.amount,
      validFrom: from,
      validUntil: until,
      supersededBy: null,
    });
  }

  const availabilityChanges = book.products.filter(
    (product) => (availability.get(product.productKey) ?? true) !== product.onSale,
  );
  if (errors.length > 0) return { errors: errors.sort(compareByEntry) };
  return { plan: { inserts, ends: [...ends.values()], availability: availabilityChanges } };
}

/**
 * An entry restates a price with the same unit and amount and the same window. An entry
 * without `valid_from` restates the price in force now. An entry with no end also restates a
 * price that a later scheduled change ended, so re-applying a book changes nothing.
 */
function restates(entry: PriceBookEntry, slot: Slot, now: Date): boolean {
  if (slot.unitType !== entry.unitType || slot.unitCount !== entry.unitCount || slot.amount !== entry.amount) {
    return false;
  }
  const startMatches =
    entry.validFrom === null
      ? slot.validFrom.getTime() <= now.getTime() &&
        (slot.validUntil === null || now.getTime() < slot.validUntil.getTime())
      : slot.validFrom.getTime() === entry.validFrom.getTime();
  const endMatches =
    entry.validUntil === null
      ? slot.validUntil === null || slot.supersededBy !== null
      : slot.validUntil?.getTime() === entry.validUntil.getTime();
  return startMatches && endMatches;
}

function overlaps(slot: Slot, from: Date, until: Date | null): boolean {
  const startsBeforeEnd = until === null || slot.validFrom.getTime() < until.getTime();
  const endsAfterStart = slot.validUntil === null || slot.validUntil.getTime() > from.getTime();
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
  const origin = slot.existingId !== null ? 'the recorded price' : 'the price';
  return `${origin} ${slot.amount} per ${slot.unitCount} ${slot.unitType} from ${formatInstant(slot.validFrom)} until ${until}`;
}

/** Orders messages by entry number (`prices[2]` before `prices[10]`). */
function compareByEntry(a: string, b: string): number {
  const n = (s: string): number => Number(/^\w+\[(\d+)\]/.exec(s)?.[1] ?? -1);
  return n(a) - n(b) || compareCodePoints(a, b);
}
