import { sortNatural } from '../catalogue/natural-order';
import { formatInstant } from '../core/instant';
import type { PriceRecord } from '../core/price-record';
import { sortInBookOrder } from './format-price-book';
import type { ImportPlan } from './plan-import';
import { changeAsRun, planChangeJson } from './reviewed-plan';
import { joinedInParts, prettyJsonParts, widest } from './text-parts';

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
 * - `end`: the end of a recorded open price is set to `validUntil` (by the `change` of that instant);
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
  const endedBy = new Map(plan.ends.map((end) => [end.supersededBy, end.record]));
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
      // An end is set at the valid_from of the price that ends it.
      ...atApplyOf(false, plan.inserts[end.supersededBy].startsAtApply),
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

/**
 * One line per change, columns separated by spaces (the kind, the product key and the scope
 * padded to line up), e.g.
 * `change    compute.g2.4  list        0.0590 per 3600 seconds from 2027-01-01T00:00:00Z, ending 0.0610 from 2026-01-01T00:00:00Z`.
 * The scope is `list` or `org:<organization id>`, `-` for availability, which has none. In parts
 * (text-parts.ts): a million changes are never one string.
 */
export function* importChangeLines(changes: readonly ImportChange[]): Generator<string, void, void> {
  const keyWidth = widest(changes.map(productKeyOf));
  const scopeWidth = widest(changes.map(scopeColumn));
  yield* joinedInParts(
    (function* () {
      for (const change of changes) {
        const what = whatHappens(change);
        const columns =
          `${kindOf(change).padEnd(KIND_WIDTH)} ${productKeyOf(change).padEnd(keyWidth)}  ` +
          scopeColumn(change).padEnd(scopeWidth);
        yield `${what ? `${columns}  ${what}` : columns.trimEnd()}\n`;
      }
    })(),
  );
}

/** The lines of importChangeLines as one string, for a plan known to be small. */
export function formatImportChanges(changes: readonly ImportChange[]): string {
  return [...importChangeLines(changes)].join('');
}

/** The summary line: what was (or, for a dry run, would be) written, in one stable form. */
export function formatImportSummary(report: ImportReport, file: string): string {
  if (report.inserted + report.ended + report.availabilityChanged === 0) {
    return `nothing to change: everything in ${file} is already recorded${report.dryRun ? ' (dry run)' : ''}\n`;
  }
  const at = report.instant.toISOString();
  const tally =
    `${report.inserted} prices set, ${report.ended} ended, ${report.availabilityChanged} availability changes, ` +
    `${report.unchanged} unchanged`;
  return report.dryRun
    ? `dry run at ${at}: ${tally}; nothing was written\n`
    : `applied at ${at}: ${tally} (version ${report.version})\n`;
}

/** The report as JSON for tools (`--json`), in parts; field names and values as in the price book file. */
export function importReportJsonParts(report: ImportReport): Generator<string, void, void> {
  const head = {
    dry_run: report.dryRun,
    instant: report.instant.toISOString(),
    version: report.version,
    summary: {
      prices_set: report.inserted,
      ended: report.ended,
      availability_changes: report.availabilityChanged,
      unchanged: report.unchanged,
    },
  };
  return prettyJsonParts(head, 'changes', mapped(report.changes, importChangeJson));
}

/** The report as JSON in one string, for a plan known to be small. */
export function importReportJson(report: ImportReport): string {
  return [...importReportJsonParts(report)].join('');
}

function* mapped<T, U>(items: readonly T[], map: (item: T) => U): Generator<U, void, void> {
  for (const item of items) yield map(item);
}

const KIND_WIDTH = 9;

function kindOf(change: ImportChange): string {
  if (change.kind !== 'availability') return change.kind;
  return change.onSale ? 'on-sale' : 'off-sale';
}

function whatHappens(change: ImportChange): string {
  switch (change.kind) {
    case 'new':
      return describeTerms(change.price);
    case 'change':
      return `${describeTerms(change.price)}, ending ${change.ends.amount} from ${formatInstant(change.ends.validFrom)}`;
    case 'end':
      return `${describeTerms(change.price)} ends at ${formatInstant(change.validUntil)}`;
    case 'availability':
      return '';
  }
}

function describeTerms(price: PriceTerms): string {
  const until = price.validUntil !== null ? ` until ${formatInstant(price.validUntil)}` : '';
  return `${price.amount} per ${price.unitCount} ${price.unitType} from ${formatInstant(price.validFrom)}${until}`;
}

/**
 * One change as `--json` gives it, every instant as the run had it; field names and values as in
 * the price book file (a plan file gives it so too, but for the apply's own instants: reviewed-plan.ts).
 */
export function importChangeJson(change: ImportChange): Record<string, unknown> {
  return planChangeJson(changeAsRun(change));
}

function scopeOf(organizationId: string | null): string {
  return organizationId === null ? 'list' : `org:${organizationId}`;
}

function scopeColumn(change: ImportChange): string {
  return change.kind === 'availability' ? '-' : scopeOf(change.price.organizationId);
}

function productKeyOf(change: ImportChange): string {
  return change.kind === 'availability' ? change.productKey : change.price.productKey;
}
