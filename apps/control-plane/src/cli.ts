import 'reflect-metadata';
import {
  applyPriceBook,
  exportPriceBook,
  loadPricingData,
  parseInstant,
  PriceBookRefusedError,
  renderPriceList,
  PricingSnapshot,
  withdrawScheduled,
  type Withdrawal,
} from '@app/pricing';
import { Logger } from '@nestjs/common';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { ConfigurationError, loadConfig } from './config/environment';
import { dataSourceOptions } from './database/data-source-options';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded-postgres';
import { migrateUnderLock } from './database/migrate';
import { PriceBookFileError, readPriceBookFile } from './price-book-file';

const USAGE = `usage: npm run pricing -- <command>

  import <file>        apply a price book (all of it or nothing)
  export               print the whole price book (history included) in the import format
  show                 print the public price list as GET /v1/pricing serves it now
  withdraw <product_key> --valid-from <timestamp> [--organization <id>]
                       withdraw a scheduled price (reopens the price it would have ended)
  withdraw <product_key> --valid-until <timestamp> [--organization <id>]
                       withdraw a scheduled end
  migrate              migrate the database

The database is DATABASE_URL, else the embedded PostgreSQL in DATA_DIR (default .data/).`;

class UsageError extends Error {}

/** Exit codes: 0 done, 1 refused or failed (nothing written), 2 wrong usage. */
async function main(argv: string[]): Promise<number> {
  // stdout carries exports and the price list: only warnings and errors are logged (to stderr).
  Logger.overrideLogger(['warn', 'error', 'fatal']);
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'valid-from': { type: 'string' },
      'valid-until': { type: 'string' },
      organization: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) {
    console.log(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  const work = commandFor(command, rest, values);
  const config = loadConfig(process.env);
  const embedded: EmbeddedDatabase | undefined = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres(config.dataDir);
  const dataSource = new DataSource(dataSourceOptions(config.databaseUrl ?? embedded!.url));
  try {
    await dataSource.initialize();
    await migrateUnderLock(dataSource);
    await work(dataSource);
    return 0;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

type Values = { 'valid-from'?: string; 'valid-until'?: string; organization?: string };

function commandFor(command: string, args: string[], values: Values): (dataSource: DataSource) => Promise<void> {
  switch (command) {
    case 'import': {
      if (args.length !== 1) throw new UsageError('import takes one file');
      const bookPromise = readPriceBookFile(args[0]);
      bookPromise.catch(() => undefined); // awaited below, after the database is up
      return async (dataSource) => {
        const result = await applyPriceBook(dataSource, await bookPromise);
        console.log(
          result.changed
            ? `applied at ${result.instant.toISOString()}: ${result.inserted} prices set, ${result.ended} ended, ${result.availabilityChanged} availability changes (version ${result.version})`
            : `nothing to change: everything in ${args[0]} is already recorded`,
        );
      };
    }
    case 'export':
      noArgs(command, args);
      return async (dataSource) => void process.stdout.write(await exportPriceBook(dataSource));
    case 'show':
      noArgs(command, args);
      return async (dataSource) => {
        const snapshot = new PricingSnapshot(await loadPricingData(dataSource));
        process.stdout.write(renderPriceList(snapshot.listHistory, new Date()).body);
      };
    case 'withdraw': {
      const withdrawal = withdrawalOf(args, values);
      return async (dataSource) => {
        const result = await withdrawScheduled(dataSource, withdrawal);
        console.log(`withdrawn at ${result.instant.toISOString()} (version ${result.version})`);
      };
    }
    case 'migrate':
      noArgs(command, args);
      return () => Promise.resolve(console.log('database migrated'));
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

function withdrawalOf(args: string[], values: Values): Withdrawal {
  if (args.length !== 1) throw new UsageError('withdraw takes one product key');
  const [productKey] = args;
  const organizationId = values.organization ?? null;
  const from = values['valid-from'];
  const until = values['valid-until'];
  if ((from === undefined) === (until === undefined))
    throw new UsageError('withdraw takes --valid-from or --valid-until');
  const text = (from ?? until)!;
  const instant = parseInstant(text);
  if (!instant) throw new UsageError(`"${text}" is not an RFC 3339 timestamp with an offset`);
  return from !== undefined
    ? { productKey, organizationId, validFrom: instant }
    : { productKey, organizationId, validUntil: instant };
}

function noArgs(command: string, args: string[]): void {
  if (args.length > 0) throw new UsageError(`${command} takes no arguments`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(error as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    if (
      error instanceof PriceBookRefusedError ||
      error instanceof PriceBookFileError ||
      error instanceof ConfigurationError
    ) {
      console.error(error.message);
    } else {
      console.error(`failed, nothing was written: ${error instanceof Error ? error.message : String(error)}`);
    }
    process.exit(1);
  },
);
