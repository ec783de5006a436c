import { parseArgs } from 'node:util';
import type { DataSource } from 'typeorm';
import { PriceBookService } from '../price-book/price-book.service';
import type { PriceBook } from '../price-book/price-book';
import type { Withdrawal } from '../price-book/plan-withdrawal';
import { parseInstant } from '../price-list/instant';
import { readPriceBookFile } from './price-book-file';

export const PRICE_BOOK_USAGE = `usage: npm run -s pricing -- <command>

  import <file>        apply a price book (all of it or nothing)
  export               print the whole price book (history included) in the import format
  show                 print the public price list as GET /v1/pricing serves it now
  withdraw <product_key> --valid-from <timestamp> [--organization <id>]
                       withdraw a scheduled price (reopens the price it would have ended)
  withdraw <product_key> --valid-until <timestamp> [--organization <id>]
                       withdraw a scheduled end
  migrate              migrate the database

The database is DATABASE_URL, else the embedded PostgreSQL in DATA_DIR (default .data/).`;

export class PriceBookUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PriceBookUsageError';
  }
}

/** A command of the price book CLI, checked (and its book read) before any database is touched. */
export type PriceBookCommand =
  | { readonly name: 'help' }
  | { readonly name: 'import'; readonly file: string; readonly book: PriceBook }
  | { readonly name: 'export' }
  | { readonly name: 'show' }
  | { readonly name: 'withdraw'; readonly withdrawal: Withdrawal }
  | { readonly name: 'migrate' };

/** Reads the command line; throws PriceBookUsageError, or PriceBookFileError for a bad book. */
export async function preparePriceBookCommand(argv: readonly string[]): Promise<PriceBookCommand> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        'valid-from': { type: 'string' },
        'valid-until': { type: 'string' },
        organization: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new PriceBookUsageError((error as Error).message);
  }
  const { positionals, values } = parsed;
  const [command, ...args] = positionals;
  if (values.help) return { name: 'help' };
  switch (command) {
    case undefined:
      throw new PriceBookUsageError('a command is needed');
    case 'import':
      if (args.length !== 1) throw new PriceBookUsageError('import takes one file');
      return { name: 'import', file: args[0], book: await readPriceBookFile(args[0]) };
    case 'export':
    case 'show':
    case 'migrate':
      if (args.length > 0) throw new PriceBookUsageError(`${command} takes no arguments`);
      return { name: command };
    case 'withdraw':
      return { name: 'withdraw', withdrawal: withdrawalOf(args, values) };
    default:
      throw new PriceBookUsageError(`unknown command "${command}"`);
  }
}

/** The commands that need the database. */
export type DatabaseCommand = Exclude<PriceBookCommand, { readonly name: 'help' }>;

/**
 * Runs a prepared command on a migrated database at `now` (what `show` shows); what it prints
 * goes to `out`. Refusals throw PriceBookRefusedError, with nothing written.
 */
export async function runPriceBookCommand(
  command: DatabaseCommand,
  dataSource: DataSource,
  out: (text: string | Buffer) => void,
  now: Date,
): Promise<void> {
  const priceBook = PriceBookService.on(dataSource);
  switch (command.name) {
    case 'import': {
      const result = await priceBook.applyBook(command.book);
      return out(
        result.changed
          ? `applied at ${result.instant.toISOString()}: ${result.inserted} prices set, ${result.ended} ended, ${result.availabilityChanged} availability changes (version ${result.version})\n`
          : `nothing to change: everything in ${command.file} is already recorded\n`,
      );
    }
    case 'export':
      return out(await priceBook.export());
    case 'show':
      return out(await priceBook.priceListAt(now));
    case 'withdraw': {
      const result = await priceBook.withdraw(command.withdrawal);
      return out(`withdrawn at ${result.instant.toISOString()} (version ${result.version})\n`);
    }
    case 'migrate':
      return out('database migrated\n');
  }
}

function withdrawalOf(
  args: readonly string[],
  values: { 'valid-from'?: string; 'valid-until'?: string; organization?: string },
): Withdrawal {
  if (args.length !== 1) throw new PriceBookUsageError('withdraw takes one product key');
  const [productKey] = args;
  const organizationId = values.organization ?? null;
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
