import { listProblems, MAX_LISTED_PROBLEMS } from '../errors/bounded-text';
import { InvalidUsageError } from '../errors/pricing-error';
import {
  focusCsvHeader,
  focusCsvRecord,
  focusRows,
  type FocusBilling,
  type FocusRow,
  type FocusUsage,
} from '../core/focus';
import { recordsAsRecordedAt } from '../core/as-recorded';
import { applicablePricesIn, type ApplicablePrices } from '../core/usage';
import type { PriceBookReads } from '../database/price-book-reads';
import type { UsageFileRow } from './usage-file';

// `focus` (docs/price-book-cli.md): a usage file priced with the price book in the database, as
// FOCUS 1.2 rows in CSV on stdout (core/focus.ts).

/** What a run of `focus` is given besides its usage: FocusBilling, the account of list-price usage apart. */
export interface FocusCommandBilling extends Omit<FocusBilling, 'billingAccountId'> {
  /** The billing account of usage without an organization (`--billing-account`); others are billed to theirs. */
  readonly listBillingAccountId: string | null;
}

/** Rows written per call of `out`: a large usage file is never one string. */
const ROWS_PER_WRITE = 1_000;

/**
 * The prices `usage` is priced at: the records of its product keys, list prices and the agreed
 * prices of its organizations, as the price book holds them now, or as it recorded them at
 * `asRecordedAt` (core/as-recorded.ts: an invoice priced again gives the same rows). The one read of
 * `focus`.
 */
export async function pricesForUsage(
  reads: PriceBookReads,
  usage: readonly UsageFileRow[],
  asRecordedAt: number | null = null,
): Promise<(productKey: string, organizationId: string | null) => ApplicablePrices> {
  const keys = new Set(usage.map((row) => row.productKey));
  const organizations = new Set(usage.flatMap((row) => (row.organizationId === null ? [] : [row.organizationId])));
  const { records, ends } = await reads.recordsOf([...keys], [...organizations]);
  return applicablePricesIn(asRecordedAt === null ? records : recordsAsRecordedAt(records, ends, asRecordedAt));
}

/**
 * Prices every usage of the file and writes the FOCUS rows as CSV to `out`, the header first:
 * all of them, or none. Refused with INVALID_USAGE naming each line at fault when any part of the
 * usage has no price, lies outside the billing period, or is metered over a period a price
 * change splits.
 */
export async function runFocus(
  file: string,
  usage: readonly UsageFileRow[],
  billing: FocusCommandBilling,
  reads: PriceBookReads,
  out: (text: string) => void,
  asRecordedAt: number | null = null,
): Promise<void> {
  const pricesOf = await pricesForUsage(reads, usage, asRecordedAt);
  const rows: FocusRow[] = [];
  const problems: string[] = [];
  for (const row of usage) {
    const { listBillingAccountId, ...common } = billing;
    const account = row.organizationId ?? listBillingAccountId;
    const scope = row.organizationId === null ? '' : ` for ${row.organizationId}`;
    if (account === null) {
      problems.push(`line ${row.line}: no organization_id, and no --billing-account for usage at list prices`);
      continue;
    }
    try {
      const cost = focusRows(row.productKey, pricesOf(row.productKey, row.organizationId), usageOf(row), {
        ...common,
        billingAccountId: account,
      });
      for (const row of cost.rows) rows.push(row);
      for (const part of cost.unpriced) {
        problems.push(
          `line ${row.line}: ${row.productKey}${scope} has no price from ${part.from.toISOString()} to ${part.to.toISOString()}`,
        );
      }
    } catch (error) {
      if (!(error instanceof InvalidUsageError)) throw error;
      problems.push(`line ${row.line}: ${error.message}`);
    }
    if (problems.length > MAX_LISTED_PROBLEMS) break; // enough to list
  }
  if (problems.length > 0) {
    throw new InvalidUsageError(`${file}: refused, no rows were written:\n  ${listProblems(problems)}`, 'usage', {
      problems: problems.slice(0, MAX_LISTED_PROBLEMS),
    });
  }
  out(focusCsvHeader());
  for (let start = 0; start < rows.length; start += ROWS_PER_WRITE) {
    out(
      rows
        .slice(start, start + ROWS_PER_WRITE)
        .map(focusCsvRecord)
        .join(''),
    );
  }
}

/** A usage of the file as focusRows takes it: time (and size), or metered over its period. */
function usageOf(row: UsageFileRow): FocusUsage {
  const period = { from: row.from, to: row.to };
  if (row.quantity !== null) return { ...period, quantity: row.quantity };
  return row.sizeGib === null ? period : { ...period, sizeGib: row.sizeGib };
}
