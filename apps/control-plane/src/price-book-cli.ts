import { ConsoleLogger, Logger, type LogLevel } from '@nestjs/common';
import {
  dataSourceOptions,
  GroupRolesMissingError,
  migrateDatabase,
  pendingMigrations,
  SchemaBehindError,
} from '@app/database';
import {
  cliFailure,
  PRICE_BOOK_USAGE,
  preparePriceBookCommand,
  runPriceBookCommand,
  terminalProgress,
  type ProgressStream,
} from '@app/pricing/cli';
import { DataSource } from 'typeorm';
import { ConfigurationError, loadConfig, type AppConfig } from './config/app-config';
import { appDatabaseOptions } from './database/app-database';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded-postgres';
import { cliLogger } from './logging/logging';

/**
 * The commands that write: they migrate the database first, when their role may (migrateDatabase).
 * The others only read, and never change it.
 */
const WRITING_COMMANDS: ReadonlySet<string> = new Set(['migrate', 'import', 'apply', 'withdraw']);

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

/** Where a run of the CLI reads its environment and writes: the process's, or a test's. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The command's output: exports, plans, the price list. */
  readonly stdout: (text: string | Buffer) => void;
  /** Refusals, errors and diagnostics (as log lines), never the command's output. */
  readonly stderr: ProgressStream;
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

/**
 * The price book CLI (`npm run -s pricing -- <command>`; docs/price-book-cli.md): the command and
 * its book are checked before the database is touched; a command that writes migrates the
 * database first when its role may (migrateDatabase), one that only reads (show, export, history, changes, verify) refuses a database with pending
 * migrations. Then the command runs, on an application context of PriceBookCliModule. Resolves with the exit code: 0 done, 1 refused or failed
 * (nothing written), 2 wrong usage. cli.ts runs it for the process; tests run it in theirs.
 */
export async function runPriceBookCli(argv: readonly string[], io: CliIo): Promise<number> {
  const progress = terminalProgress(io.stderr);
  try {
    await run(argv, io, progress);
    return 0;
  } catch (error) {
    const { code, message } = cliFailure(error, [
      PendingMigrationsError,
      ConfigurationError,
      SchemaBehindError,
      GroupRolesMissingError,
    ]);
    io.stderr.write(`${message}\n`);
    return code;
  } finally {
    progress.stop();
  }
}

async function run(argv: readonly string[], io: CliIo, progress: ReturnType<typeof terminalProgress>): Promise<void> {
  // stdout carries exports, plans and the price list: only warnings and errors are logged, to stderr.
  Logger.overrideLogger(new StderrLogger({ logLevels: ['warn', 'error', 'fatal'] }));
  // The configuration is read once the command line is known to be right (usage errors exit 2,
  // --help needs none), and before a book is read: PRICE_BOOK_MAX_BYTES bounds the book.
  let loaded: AppConfig | undefined;
  const configuration = (): AppConfig => (loaded ??= loadConfig(io.env));
  const command = await preparePriceBookCommand(argv, {
    progress,
    maxBookBytes: () => configuration().priceBookMaxBytes,
    environmentActor: () => configuration().pricingActor,
  });
  if (command.name === 'help') return io.stdout(`${PRICE_BOOK_USAGE}\n`);
  // `migrate` as a deploy step needs only the owner's URL: it then runs as that role alone
  // (migrateDatabase: the same URL twice grants the group roles and checks no runtime role).
  const config =
    command.name === 'migrate' && !io.env.DATABASE_URL && io.env.DATABASE_MIGRATION_URL
      ? loadConfig({ ...io.env, DATABASE_URL: io.env.DATABASE_MIGRATION_URL })
      : configuration();
  // Diagnostics (PostgreSQL, the database) as log lines on stderr; results stay text.
  Logger.overrideLogger(cliLogger(config.logFormat, io.stderr));
  const embedded: EmbeddedDatabase | undefined = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres(config.dataDir);
  // The embedded default's CLI runs as its writer login (the service, as its reader).
  const url = config.databaseUrl ?? embedded!.writerUrl;
  // Migrations run as the migration role when there is one (DATABASE_MIGRATION_URL, or the
  // embedded default's owner role); the command itself runs as DATABASE_URL's role.
  const migrationUrl = embedded ? embedded.migrationUrl : config.databaseMigrationUrl;
  // No query logging: a failed statement of a large book would print all its parameters; the
  // CLI says what failed itself.
  const databaseOptions = {
    ...appDatabaseOptions(
      url,
      config.databaseTimeoutS,
      config.databaseMigrationTimeoutS,
      embedded ? undefined : config.databaseRolePrefix,
    ),
    migrationUrl,
  };
  const dataSource = new DataSource({ ...dataSourceOptions(databaseOptions), logging: false });
  try {
    await dataSource.initialize();
    if (WRITING_COMMANDS.has(command.name)) {
      await migrateDatabase(dataSource, databaseOptions);
    } else {
      const pending = await pendingMigrations(dataSource);
      if (pending.length > 0) throw new PendingMigrationsError(command.name, pending);
    }
    await runPriceBookCommand(command, dataSource, io.stdout, new Date(), progress);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}
