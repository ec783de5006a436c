import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { dataSourceOptions, migrateUnderLock } from '@app/database';
import {
  PRICE_BOOK_USAGE,
  PriceBookFileError,
  PriceBookRefusedError,
  PriceBookUsageError,
  preparePriceBookCommand,
  runPriceBookCommand,
} from '@app/pricing';
import { DataSource } from 'typeorm';
import { ConfigurationError, loadConfig } from './config/app-config';
import { appDatabaseOptions } from './database/app-database';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded-postgres';
import { cliLogger } from './logging/logging';

/**
 * The price book CLI (`npm run -s pricing -- <command>`): the command and its book are checked
 * before the database is touched; the database is migrated, then the command runs.
 * Exit codes: 0 done, 1 refused or failed (nothing written), 2 wrong usage.
 */
async function main(argv: string[]): Promise<void> {
  // stdout carries exports and the price list: only warnings and errors are logged (to stderr).
  Logger.overrideLogger(['warn', 'error', 'fatal']);
  const command = await preparePriceBookCommand(argv);
  const write = (text: string | Buffer): void => void process.stdout.write(text);
  if (command.name === 'help') return write(`${PRICE_BOOK_USAGE}\n`);
  const config = loadConfig(process.env);
  // Diagnostics (PostgreSQL, the database) as log lines on stderr; results stay text.
  Logger.overrideLogger(cliLogger(config.logFormat));
  const embedded: EmbeddedDatabase | undefined = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres(config.dataDir);
  const url = config.databaseUrl ?? embedded!.url;
  const dataSource = new DataSource(dataSourceOptions(appDatabaseOptions(url, config.databaseTimeoutS)));
  try {
    await dataSource.initialize();
    await migrateUnderLock(dataSource);
    await runPriceBookCommand(command, dataSource, write, new Date());
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

/** Exits once everything written to stdout has gone out: writes to a pipe are asynchronous. */
function exit(code: number): void {
  process.stdout.write('', () => process.exit(code));
}

main(process.argv.slice(2)).then(
  () => exit(0),
  (error: unknown) => {
    if (error instanceof PriceBookUsageError) {
      console.error(`${error.message}\n\n${PRICE_BOOK_USAGE}`);
      return exit(2);
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
    exit(1);
  },
);
