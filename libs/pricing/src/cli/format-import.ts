import { formatInstant } from '../core/instant';
import type { ImportChange, ImportReport, PriceTerms } from '../price-book/describe-import';
import { changeAsRun, planChangeJson } from '../price-book/reviewed-plan';
import { joinedInParts, prettyJsonParts, widest } from './text-parts';

// How the CLI prints what an import did, or a dry run would do (docs/price-book-cli.md, "The
// plan"): plan lines, the summary, and `--json`. The changes themselves: price-book/describe-import.ts.

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
