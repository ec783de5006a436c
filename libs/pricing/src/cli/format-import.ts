import { formatInstant } from '../core/instant';
import type { AtApply, ImportChange, ImportReport, PriceTerms } from '../price-book/describe-import';
import { changeAsRun, planChangeJson, planChangeOf } from '../price-book/reviewed-plan';
import { joinedInParts, prettyJsonParts, widest } from './text-parts';

// How the CLI prints what an import did, or a dry run would do (docs/price-book-cli.md, "The
// plan"): plan lines, the summary, and `--json`. The changes themselves: price-book/describe-import.ts.

/** How a dry run shows an instant that only the apply gives (an entry without `valid_from`): not as the dry run's own. */
export const WHEN_APPLIED = 'when applied';

/**
 * One line per change, columns separated by spaces (the kind, the product key and the scope
 * padded to line up), e.g.
 * `change    compute.g2.4  list        0.0590 per 3600 seconds from 2027-01-01T00:00:00Z, ending 0.0610 from 2026-01-01T00:00:00Z`.
 * The scope is `list` or `org:<organization id>`, `-` for availability, which has none. For a dry
 * run (`dryRun`), an instant that only the apply gives reads `when applied`, as the plan file writes
 * it "at apply": the dry run's own instant is not the one an import will use. In parts
 * (text-parts.ts): a million changes are never one string.
 */
export function* importChangeLines(changes: readonly ImportChange[], dryRun = false): Generator<string, void, void> {
  const keyWidth = widest(changes.map(productKeyOf));
  const scopeWidth = widest(changes.map(scopeColumn));
  yield* joinedInParts(
    (function* () {
      for (const change of changes) {
        const what = whatHappens(change, dryRun);
        const columns =
          `${kindOf(change).padEnd(KIND_WIDTH)} ${productKeyOf(change).padEnd(keyWidth)}  ` +
          scopeColumn(change).padEnd(scopeWidth);
        yield `${what ? `${columns}  ${what}` : columns.trimEnd()}\n`;
      }
    })(),
  );
}

/** The lines of importChangeLines as one string, for a plan known to be small. */
export function formatImportChanges(changes: readonly ImportChange[], dryRun = false): string {
  return [...importChangeLines(changes, dryRun)].join('');
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
  return prettyJsonParts(
    head,
    'changes',
    mapped(report.changes, (change) => importChangeJson(change, report.dryRun)),
  );
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

function whatHappens(change: ImportChange, dryRun: boolean): string {
  const at = (ms: number, atApply: boolean | undefined): string =>
    dryRun && atApply === true ? WHEN_APPLIED : formatInstant(ms);
  switch (change.kind) {
    case 'new':
      return describeTerms(change.price, change, at);
    case 'change':
      return `${describeTerms(change.price, change, at)}, ending ${change.ends.amount} from ${formatInstant(change.ends.validFrom)}`;
    case 'end':
      return `${describeTerms(change.price, {}, at)} ends ${dryRun && change.endsAtApply ? WHEN_APPLIED : `at ${formatInstant(change.validUntil)}`}`;
    case 'availability':
      return '';
  }
}

function describeTerms(
  price: PriceTerms,
  atApply: AtApply,
  at: (ms: number, atApply: boolean | undefined) => string,
): string {
  const until = price.validUntil !== null ? ` until ${at(price.validUntil, atApply.endsAtApply)}` : '';
  return `${price.amount} per ${price.unitCount} ${price.unitType} from ${at(price.validFrom, atApply.startsAtApply)}${until}`;
}

/**
 * One change as `--json` gives it; field names and values as in the price book file. An import's,
 * every instant as the run had it; a dry run's, as a plan file gives it (reviewed-plan.ts): an
 * instant that only the apply gives is "at apply".
 */
export function importChangeJson(change: ImportChange, dryRun = false): Record<string, unknown> {
  return planChangeJson(dryRun ? planChangeOf(change) : changeAsRun(change));
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
