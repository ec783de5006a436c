import { sortNatural } from '../catalogue/natural-order';
import type { PriceRecord } from '../core/price-record';
import { sortInBookOrder } from './book-order';
import type { ImportPlan } from './plan-import';

// What an import changes, change by change, in a stable order: what the CLI prints
// (cli/format-import.ts), what a reviewed plan holds (reviewed-plan.ts).

/** The terms of one price: what a plan line and the plan's JSON show of it (instants in epoch ms). */
export type PriceTerms = Pick<
  PriceRecord,
  'productKey' | 'organizationId' | 'unitType' | 'unitCount' | 'amount' | 'validFrom' | 'validUntil'
>;

/**
 * Which instants of a change are the write's own, not the book's: an entry without `valid_from`
 * starts at the write's instant, and ends the open price before it then. A reviewed plan names
 * them as such (price-book/reviewed-plan.ts). Absent: false.
 */
export interface AtApply {
  /** The price's `valid_from` is the write's instant. */
  readonly startsAtApply?: boolean;
  /** The price's new end (`price.validUntil`; an `end`'s `validUntil`) is the write's instant. */
  readonly endsAtApply?: boolean;
}

/**
 * One change of an import, as the operator reads it (docs/price-book-cli.md, "The plan"):
 * - `new`: a price is recorded and ends no recorded price;
 * - `change`: a price is recorded and ends the recorded open price `ends` at its `valid_from`
 *   (a scheduled change; `ends` is that price as it was);
 * - `end`: the end of a recorded open price is set to `validUntil`: by the `change` of that instant,
 *   or by itself (an entry that restates the price with a `valid_until`: no record is added);
 * - `availability`: a product goes on sale or off sale.
 * Every `new` and `change` is one price set, every `end` one price ended.
 */
export type ImportChange =
  | ({ readonly kind: 'new'; readonly price: PriceTerms } & AtApply)
  | ({ readonly kind: 'change'; readonly price: PriceTerms; readonly ends: PriceTerms } & AtApply)
  | ({ readonly kind: 'end'; readonly price: PriceTerms; readonly validUntil: number } & Pick<AtApply, 'endsAtApply'>)
  | { readonly kind: 'availability'; readonly productKey: string; readonly onSale: boolean };

type PricedChange = Exclude<ImportChange, { readonly kind: 'availability' }>;

/** What an import did, or what a dry run found it would do, at `instant`. */
export interface ImportReport {
  readonly dryRun: boolean;
  readonly instant: Date;
  /** The price book's version after the import (unchanged by a dry run or an import that changes nothing). */
  readonly version: string;
  /** Prices set (`new` and `change`). */
  readonly inserted: number;
  readonly ended: number;
  readonly availabilityChanged: number;
  /** Entries of the book (prices and products) that restate what is recorded. */
  readonly unchanged: number;
  readonly changes: readonly ImportChange[];
}

/**
 * The changes of a plan in a stable order: availability by product key, then prices by scope
 * (list prices first, then organizations), product key (natural order) and `valid_from`; so
 * the same plan always gives the same lines. O(n log n).
 */
export function describeImportPlan(plan: ImportPlan): ImportChange[] {
  const endedBy = new Map(
    plan.ends.flatMap((end) => (end.supersededBy === null ? [] : [[end.supersededBy, end.record] as const])),
  );
  const prices: PricedChange[] = [
    ...plan.inserts.map((insert, index): PricedChange => {
      const ended = endedBy.get(index);
      const atApply = atApplyOf(insert.startsAtApply, insert.endsAtApply);
      return ended
        ? { kind: 'change', price: insert, ends: ended, ...atApply }
        : { kind: 'new', price: insert, ...atApply };
    }),
    ...plan.ends.map((end): PricedChange => ({
      kind: 'end',
      price: end.record,
      validUntil: end.validUntil,
      // An end is set at the valid_from of the price that ends it; an end of its own, at the book's instant.
      ...atApplyOf(false, end.supersededBy !== null && plan.inserts[end.supersededBy].startsAtApply),
    })),
  ];
  const availability = sortNatural(plan.availability, (a) => a.productKey).map((a): ImportChange => ({
    kind: 'availability',
    productKey: a.productKey,
    onSale: a.onSale,
  }));
  return [...availability, ...sortInBookOrder(prices, (change) => change.price)];
}

/** The AtApply of a change: only what holds, so that a change of the book's instants alone has neither. */
function atApplyOf(startsAtApply: boolean, endsAtApply: boolean): AtApply {
  return { ...(startsAtApply ? { startsAtApply } : {}), ...(endsAtApply ? { endsAtApply } : {}) };
}
