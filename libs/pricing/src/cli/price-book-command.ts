import { parseArgs } from 'node:util';
import type { DataSource } from 'typeorm';
import { explainProductKey } from '../catalogue/catalogue';
import { formatImportChanges, formatImportSummary, importReportJson } from '../price-book/describe-import';
import { formatHistory } from '../price-book/format-history';
import { ORGANIZATION_ID, type PriceBook } from '../price-book/price-book';
import { PriceBookService } from '../price-book/price-book.service';
import type { Withdrawal } from '../price-book/plan-withdrawal';
import { NO_PROGRESS, type Progress } from '../price-book/progress';
import { parseInstant } from '../price-list/instant';
import { readPriceBookFile } from './price-book-file';

export const PRICE_BOOK_USAGE = `usage: npm run -s pricing -- <command>

  import <file> [--dry-run] [--json]
                       apply a price book (all of it or nothing) and print what changed, one
                       line per change, then a summary; --dry-run checks and writes it exactly
                       as import does, prints the same, then rolls back (nothing is written);
                       --json prints the same as JSON
  export               print the whole price book (history included) in the import format
  show                 print the public price list as GET /v1/pricing serves it now
  history <product_key> [--organization <id>]
                       print every record of a list price (or an organization's price), oldest
                       first, with its status now and when it was recorded, and withdrawals
  withdraw <product_key> --valid-from <timestamp> [--organization <id>]
                       withdraw a scheduled price (reopens the price it would have ended)
  withdraw <product_key> --valid-until <timestamp> [--organization <id>]
                       withdraw a scheduled end
  migrate              migrate the database

Options may stand before or after the arguments. On a terminal, reading, checking and writing
a large book show progress on stderr. The database is DATABASE_URL, else the embedded
PostgreSQL in DATA_DIR (default .data/).`;

export class PriceBookUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PriceBookUsageError';
  }
}

/** A command of the price book CLI, checked (and its book read) before any database is touched. */
export type PriceBookCommand =
  | { readonly name: 'help' }
  | {
      readonly name: 'import';
      readonly file: string;
      readonly book: PriceBook;
      readonly dryRun: boolean;
      readonly json: boolean;
    }
  | { readonly name: 'export' }
  | { readonly name: 'show' }
  | { readonly name: 'history'; readonly productKey: string; readonly organizationId: string | null }
  | { readonly name: 'withdraw'; readonly withdrawal: Withdrawal }
  | { readonly name: 'migrate' };

type OptionName = 'valid-from' | 'valid-until' | 'organization' | 'dry-run' | 'json';

/** The options each command takes; any other is a usage error. */
const OPTIONS_OF: Readonly<Record<string, readonly OptionName[]>> = {
  import: ['dry-run', 'json'],
  history: ['organization'],
  withdraw: ['valid-from', 'valid-until', 'organization'],
};

/**
 * Reads the command line; throws PriceBookUsageError, or PriceBookFileError for a bad book.
 * Reading a book reports to `progress`.
 */
export async function preparePriceBookCommand(
  argv: readonly string[],
  progress: Progress = NO_PROGRESS,
): Promise<PriceBookCommand> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        'valid-from': { type: 'string' },
        'valid-until': { type: 'string' },
        organization: { type: 'string' },
        'dry-run': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new PriceBookUsageError((error as Error).message);
  }
  const { positionals, values } = parsed;
  const [command, ...args] = positionals;
  if (values.help) return { name: 'help' };
  if (command === undefined) throw new PriceBookUsageError('a command is needed');
  const allowed = OPTIONS_OF[command] ?? [];
  for (const option of Object.keys(values) as OptionName[]) {
    if (!allowed.includes(option)) throw new PriceBookUsageError(`--${option} is not an option of ${command}`);
  }
  switch (command) {
    case 'import': {
      if (args.length !== 1) throw new PriceBookUsageError('import takes one file');
      const book = await readPriceBookFile(args[0], progress);
      return { name: 'import', file: args[0], book, dryRun: values['dry-run'] === true, json: values.json === true };
    }
    case 'export':
    case 'show':
    case 'migrate':
      if (args.length > 0) throw new PriceBookUsageError(`${command} takes no arguments`);
      return { name: command };
    case 'history':
      return { name: 'history', ...scopeOf('history', args, values.organization) };
    case 'withdraw':
      return { name: 'withdraw', withdrawal: withdrawalOf(args, values) };
    default:
      throw new PriceBookUsageError(`unknown command "${command}"`);
  }
}

/** The commands that need the database. */
export type DatabaseCommand = Exclude<PriceBookCommand, { readonly name: 'help' }>;

/**
 * Runs a prepared command on a migrated database at `now` (what `show` shows and `history`
 * calls in force); what it prints goes to `out`, progress to `progress`. Refusals throw
 * PriceBookRefusedError, with nothing written.
 */
export async function runPriceBookCommand(
  command: DatabaseCommand,
  dataSource: DataSource,
  out: (text: string | Buffer) => void,
  now: Date,
  progress: Progress = NO_PROGRESS,
): Promise<void> {
  const priceBook = PriceBookService.on(dataSource);
  switch (command.name) {
    case 'import': {
      const result = await priceBook.applyBook(command.book, { dryRun: command.dryRun, progress });
      return out(
        command.json
          ? importReportJson(result)
          : formatImportChanges(result.changes) + formatImportSummary(result, command.file),
      );
    }
    case 'export':
      return out(await priceBook.export());
    case 'show':
      return out(await priceBook.priceListAt(now));
    case 'history': {
      const history = await priceBook.history(command.productKey, command.organizationId);
      return out(formatHistory(history, command.productKey, command.organizationId, now));
    }
    case 'withdraw': {
      const result = await priceBook.withdraw(command.withdrawal);
      return out(`withdrawn at ${result.instant.toISOString()} (version ${result.version})\n`);
    }
    case 'migrate':
      return out('database migrated\n');
  }
}

/** The product key and scope of `history` and `withdraw`, checked as the price book checks them. */
function scopeOf(
  command: 'history' | 'withdraw',
  args: readonly string[],
  organization: string | undefined,
): { productKey: string; organizationId: string | null } {
  if (args.length !== 1) throw new PriceBookUsageError(`${command} takes one product key`);
  const [productKey] = args;
  const problem = explainProductKey(productKey);
  if (problem) throw new PriceBookUsageError(problem);
  if (organization !== undefined && !ORGANIZATION_ID.test(organization)) {
    throw new PriceBookUsageError(
      `--organization "${organization}": 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`,
    );
  }
  return { productKey, organizationId: organization ?? null };
}

function withdrawalOf(
  args: readonly string[],
  values: { 'valid-from'?: string; 'valid-until'?: string; organization?: string },
): Withdrawal {
  const { productKey, organizationId } = scopeOf('withdraw', args, values.organization);
  const from = values['valid-from'];
  const until = values['valid-until'];
  const text = from ?? until;
  if (text === undefined || (from !== undefined && until !== undefined)) {
    throw new PriceBookUsageError('withdraw takes --valid-from or --valid-until');
  }
  const instant = parseInstant(text);
  if (!instant) throw new PriceBookUsageError(`"${text}" is not an RFC 3339 timestamp with an offset`);
  return from !== undefined
    ? { productKey, organizationId, validFrom: instant }
    : { productKey, organizationId, validUntil: instant };
}
