import 'reflect-metadata';
import { ConsoleLogger, Logger, type LogLevel } from '@nestjs/common';
import { dataSourceOptions, migrateUnderLock, pendingMigrations } from '@app/database';
import {
  PRICE_BOOK_USAGE,
  PriceBookFileError,
  PriceBookRefusedError,
  PriceBookUsageError,
  preparePriceBookCommand,
  runPriceBookCommand,
  terminalProgress,
} from '@app/pricing';
import { DataSource } from 'typeorm';
import { ConfigurationError, loadConfig } from './config/app-config';
import { appDatabaseOptions } from './database/app-database';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded-postgres';
import { cliLogger } from './logging/logging';

/** The commands that write: they migrate the database first. The others only read, and never change it. */
const WRITING_COMMANDS: ReadonlySet<string> = new Set(['migrate', 'import', 'withdraw']);

/** A command that only reads met a database that lacks migrations: it changes nothing, not even that. */
class PendingMigrationsError extends Error {
  constructor(command: string, pending: readonly string[]) {
    super(
      `${command} only reads the database and does not migrate it, but it lacks migrations: ` +
        `${pending.join(', ')}. Run \`npm run migrate\` first.`,
    );
    this.name = 'PendingMigrationsError';
  }
}

/**
 * Nest's console logger with every level on stderr: Nest writes warnings to stdout, which
 * carries the command's output (`export > book.json`, a plan piped to a file).
 */
class StderrLogger extends ConsoleLogger {
  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: LogLevel,
    _writeStreamType?: 'stdout' | 'stderr',
    errorStack?: unknown,
    params?: Record<string, unknown>,
  ): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack, params);
  }
}

/** Progress of long steps: on stderr while it is a terminal, never on stdout. */
const progress = terminalProgress(process.stderr);

/**
 * The price book CLI (`npm run -s pricing -- <command>`): the command and its book are checked
 * before the database is touched; a command that writes migrates the database first, one that
 * only reads (show, export) refuses a database with pending migrations. Then the command runs.
 * Exit codes: 0 done, 1 refused or failed (nothing written), 2 wrong usage.
 */
async function main(argv: string[]): Promise<void> {
  // stdout carries exports, plans and the price list: only warnings and errors are logged, to stderr.
  Logger.overrideLogger(new StderrLogger({ logLevels: ['warn', 'error', 'fatal'] }));
  const command = await preparePriceBookCommand(argv, progress);
  const write = (text: string | Buffer): void => void process.stdout.write(text);
  if (command.name === 'help') return write(`${PRICE_BOOK_USAGE}\n`);
  const config = loadConfig(process.env);
  // Diagnostics (PostgreSQL, the database) as log lines on stderr; results stay text.
  Logger.overrideLogger(cliLogger(config.logFormat));
  const embedded: EmbeddedDatabase | undefined = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres(config.dataDir);
  const url = config.databaseUrl ?? embedded!.url;
  // No query logging: a failed statement of a large book would print all its parameters; the
  // CLI says what failed itself.
  const dataSource = new DataSource({
    ...dataSourceOptions(appDatabaseOptions(url, config.databaseTimeoutS)),
    logging: false,
  });
  try {
    await dataSource.initialize();
    if (WRITING_COMMANDS.has(command.name)) {
      await migrateUnderLock(dataSource);
    } else {
      const pending = await pendingMigrations(dataSource);
      if (pending.length > 0) throw new PendingMigrationsError(command.name, pending);
    }
    await runPriceBookCommand(command, dataSource, write, new Date(), progress);
  } finally {
    progress.stop();
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
    progress.stop();
    if (error instanceof PriceBookUsageError) {
      console.error(`${error.message}\n\n${PRICE_BOOK_USAGE}`);
      return exit(2);
    }
    if (
      error instanceof PriceBookRefusedError ||
      error instanceof PriceBookFileError ||
      error instanceof PendingMigrationsError ||
      error instanceof ConfigurationError
    ) {
      console.error(error.message);
    } else {
      console.error(`failed, nothing was written: ${error instanceof Error ? error.message : String(error)}`);
    }
    exit(1);
  },
);
