import { ConsoleLogger, Logger, type LogLevel } from '@nestjs/common';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import {
  dataSourceOptions,
  GroupRolesMissingError,
  isAnswered,
  SchemaBehindError,
  migrateDatabase,
  pendingMigrations,
  type DatabaseModuleOptions,
  type TimedClient,
} from '@app/database';
import {
  cliFailure,
  CliInterruptedError,
  commandHelp,
  COMMANDS,
  DatabaseUnreachableError,
  EXIT,
  globalHelp,
  isStdoutClosed,
  prepareCommand,
  readCommandLine,
  readTarget,
  runOfflineCommand,
  runPriceBookCommand,
  SchemaNotMigratedError,
  targetJson,
  targetLine,
  terminalProgress,
  wantsJson,
  type CommandName,
  type DatabaseCommand,
  type OfflineCommand,
  type ProgressStream,
} from '@app/pricing/cli';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { ConfigurationError, loadConfig, type AppConfig } from './config/app-config';
import { appDatabaseOptions } from './database/app-database';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded-postgres';
import { cliLogger } from './logging/logging';

/** Where a run of the CLI reads its environment and writes: the process's, or a test's. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The command's output: exports, plans, the price list. */
  readonly stdout: (text: string | Buffer) => void;
  /** The target, refusals, errors and diagnostics, never the command's output. */
  readonly stderr: ProgressStream;
  /** What a file argument `-` reads. Absent: `-` is a file of that name. */
  readonly stdin?: NodeJS.ReadableStream;
  /**
   * Where relative paths start: where the command was typed. The process's is INIT_CWD under npm
   * (npm runs scripts from the project's directory), else its own directory.
   */
  readonly cwd?: string;
  /** Aborted, with 'SIGINT' or 'SIGTERM' as its reason, when the process is told to stop (cli.ts). */
  readonly interrupt?: AbortSignal;
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

/** Where a run is, for what an interrupt says of it. */
type Phase = 'preparing' | 'connecting' | 'migrating' | 'running';

interface RunState {
  phase: Phase;
  command?: CommandName;
  /** The command writes the price book (import but a dry run, apply, withdraw). */
  writes: boolean;
}

/**
 * The host's errors the CLI ends with as they are: a configuration refused, and the database's group
 * roles missing (a DBA's one-time step: docs/operations.md, "Readers and writers"), exit 7; a schema
 * behind the code that this role may not migrate, exit 8, as any command that does not migrate.
 */
const EXPLAINED = [
  { type: ConfigurationError, exit: EXIT.configuration, code: 'CONFIGURATION' },
  { type: GroupRolesMissingError, exit: EXIT.configuration, code: 'GROUP_ROLES_MISSING' },
  { type: SchemaBehindError, exit: EXIT.notMigrated, code: 'SCHEMA_NOT_MIGRATED' },
];

/**
 * The price book CLI (`npm run -s pricing -- <command>`; docs/price-book-cli.md): the command line
 * and its files are checked before the database is touched; the command prints its target first
 * on stderr; a command that writes migrates the database first, a dry run and a command that only
 * reads never change it. Resolves with the exit code (cli/exit-codes.ts). cli.ts runs it for the
 * process; tests run it in theirs.
 */
export async function runPriceBookCli(argv: readonly string[], io: CliIo): Promise<number> {
  const json = wantsJson(argv);
  const progress = terminalProgress(io.stderr, {
    term: io.env.TERM,
    quiet: argv.includes('--quiet') || argv.includes('-q'),
  });
  const state: RunState = { phase: 'preparing', writes: false };
  // An interrupt reaches the write as the reason it is stopped for (inTransaction rolls it back).
  const stop = new AbortController();
  const interrupted = (): void => {
    const signal = io.interrupt?.reason === 'SIGTERM' ? 'SIGTERM' : 'SIGINT';
    stop.abort(new CliInterruptedError(signal, whatAnInterruptLeaves(state)));
  };
  if (io.interrupt?.aborted) interrupted();
  io.interrupt?.addEventListener('abort', interrupted, { once: true });
  try {
    return await run(argv, io, progress, state, stop.signal);
  } catch (error) {
    // The terminal first (a bar erased), then what happened.
    progress.stop();
    if (isStdoutClosed(error)) return EXIT.ok;
    const failure = cliFailure(error, { writes: state.writes, explained: EXPLAINED });
    io.stderr.write(`${json ? JSON.stringify(failure.json) : failure.message}\n`);
    return failure.exit;
  } finally {
    progress.stop();
    io.interrupt?.removeEventListener('abort', interrupted);
  }
}

/** What an interrupt at this point of the run leaves written, in words (docs/price-book-cli.md, "Interrupts"). */
function whatAnInterruptLeaves(state: RunState): string {
  if (state.phase === 'migrating') {
    return (
      'the migration in progress was rolled back, those that had completed are kept' +
      (state.writes ? '; nothing of the price book was written' : '')
    );
  }
  if (state.writes) return 'rolled back, nothing was written';
  return state.command === 'import' ? 'stopped (a dry run writes nothing)' : 'stopped';
}

async function run(
  argv: readonly string[],
  io: CliIo,
  progress: ReturnType<typeof terminalProgress>,
  state: RunState,
  signal: AbortSignal,
): Promise<number> {
  // stdout carries exports, plans and the price list: only warnings and errors are logged, to stderr.
  Logger.overrideLogger(new StderrLogger({ logLevels: ['warn', 'error', 'fatal'] }));
  const json = wantsJson(argv);
  const say = (line: string): void => void io.stderr.write(`${line}\n`);
  const line = readCommandLine(argv);
  if (line.command === 'help') {
    io.stdout(line.topic === null ? globalHelp() : commandHelp(line.topic));
    return EXIT.ok;
  }
  if (line.command === 'version') {
    io.stdout(json ? `${JSON.stringify(versionOf())}\n` : `${versionText()}\n`);
    return EXIT.ok;
  }
  if (COMMANDS[line.command].offline) {
    // keygen and audit use no database: no configuration of one, no target.
    const command = await prepareCommand(line, { cwd: io.cwd ?? process.cwd() });
    return runOfflineCommand(command as OfflineCommand, { out: (text) => io.stdout(text), note: say });
  }
  const dryRun = line.command === 'import' && line.values['dry-run'] === true;
  state.command = line.command;
  state.writes = COMMANDS[line.command].writes && !dryRun && line.command !== 'migrate';
  // The configuration is read once the command line is known to be right (usage errors exit 64,
  // --help needs none), and before a book is read: PRICE_BOOK_MAX_BYTES bounds the book.
  let loaded: AppConfig | undefined;
  const configuration = (): AppConfig => (loaded ??= loadConfig(io.env));
  const cwd = io.cwd ?? process.cwd();
  const command = (await abandonable(
    prepareCommand(line, {
      progress,
      maxBookBytes: () => configuration().priceBookMaxBytes,
      environmentActor: () => configuration().pricingActor,
      cwd,
      stdin: io.stdin,
    }),
    signal,
  )) as DatabaseCommand;
  // The book is read: its bar goes before anything else is said.
  progress.stop();
  // `migrate` as a deploy step needs only the owner's URL: it then runs as that role alone
  // (migrateDatabase: the same URL twice grants the group roles and checks no runtime role).
  const config =
    line.command === 'migrate' && !io.env.DATABASE_URL && io.env.DATABASE_MIGRATION_URL
      ? loadConfig({ ...io.env, DATABASE_URL: io.env.DATABASE_MIGRATION_URL })
      : configuration();
  // Diagnostics (PostgreSQL, the database) as log lines on stderr; results stay text. Those of
  // starting the embedded PostgreSQL are held until the target is said: it comes first.
  const held = new HeldLines(io.stderr);
  Logger.overrideLogger(cliLogger(config.logFormat, held, colourWanted(io)));

  state.phase = 'connecting';
  const dataDir = resolve(config.dataDir);
  if (config.databaseUrl === undefined && dryRun && !existsSync(join(dataDir, 'postgres', 'PG_VERSION'))) {
    throw new SchemaNotMigratedError(
      `import --dry-run plans against the embedded PostgreSQL under ${dataDir} (DATABASE_URL is unset), which ` +
        `does not exist yet, and a dry run creates nothing: set DATABASE_URL to plan against your database, ` +
        `or create the embedded one (npm start, or npm run migrate)`,
    );
  }
  let embedded: EmbeddedDatabase | undefined;
  try {
    if (config.databaseUrl === undefined) embedded = await abandonable(startEmbeddedPostgres(config.dataDir), signal);
  } catch (error) {
    // What the start logged says why it failed: said before the error.
    held.release();
    throw error;
  }
  // The embedded default's CLI runs as its writer login (the service, as its reader).
  const url = config.databaseUrl ?? embedded!.writerUrl;
  // Migrations run as the migration role when there is one (DATABASE_MIGRATION_URL, or the
  // embedded default's owner role); the command itself runs as DATABASE_URL's role.
  const databaseOptions: DatabaseModuleOptions = {
    ...appDatabaseOptions(
      url,
      config.databaseTimeoutS,
      config.databaseMigrationTimeoutS,
      embedded ? undefined : config.databaseRolePrefix,
    ),
    migrationUrl: embedded ? embedded.migrationUrl : config.databaseMigrationUrl,
    applicationName: applicationName(line.command, command),
  };
  const connections = new Set<TimedClient>();
  // No query logging: a failed statement of a large book would print all its parameters; the
  // CLI says what failed itself.
  const dataSource = new DataSource({
    ...trackedConnections(dataSourceOptions(databaseOptions), connections),
    logging: false,
  });
  try {
    const where = describeUrl(url);
    await abandonable(dataSource.initialize(), signal).catch((error: unknown) => {
      if (error instanceof CliInterruptedError || (isAnswered(error) && !refusedConnection(error))) throw error;
      throw new DatabaseUnreachableError(where, error, state.writes);
    });
    const target = await abandonable(
      readTarget(dataSource, url, embedded ? { via: 'embedded', dataDir } : { via: 'DATABASE_URL' }),
      signal,
    );
    say(json ? JSON.stringify(targetJson(target)) : targetLine(target));
    held.release();
    if (embedded && COMMANDS[line.command].writes) {
      say(
        `DATABASE_URL is unset: ${line.command}${dryRun ? ' --dry-run plans against' : ' writes to'} the embedded ` +
          `PostgreSQL under ${dataDir} (for development; NODE_ENV=production refuses it), not a database of yours`,
      );
    }
    let migrated: string[] | undefined;
    let withoutSchema = false;
    if (line.command === 'migrate' || state.writes) {
      state.phase = 'migrating';
      migrated = await abandonable(migrateDatabase(dataSource, databaseOptions), signal);
    } else if (target.priceBookVersion === null) {
      if (!dryRun) {
        throw new SchemaNotMigratedError(
          `${line.command} only reads the database and does not migrate it, but the database has no price book ` +
            'schema (none of its migrations ran). Run `npm run migrate` first, if this is the database you meant.',
        );
      }
      // Another application's database, or a new one: planned against what a first migration makes.
      withoutSchema = true;
      say(
        'this database has no price book schema (none of its migrations ran): the dry run plans against the book ' +
          'a first migration makes (no prices; storage.io1 and storage.st1 off sale), and migrates nothing',
      );
    } else {
      const pending = await abandonable(pendingMigrations(dataSource), signal);
      if (pending.length > 0) {
        throw SchemaNotMigratedError.pending(
          dryRun ? 'import --dry-run' : line.command,
          dryRun
            ? 'plans without migrating (a dry run writes nothing)'
            : 'only reads the database and does not migrate it',
          pending,
        );
      }
    }
    state.phase = 'running';
    const running = runPriceBookCommand(
      command,
      dataSource,
      { out: io.stdout, note: json ? undefined : say, progress, signal, withoutSchema, migrated },
      new Date(),
    );
    // A write stops itself (rolled back, or committed if its COMMIT was sent); anything else is left.
    return await (state.writes ? running : abandonable(running, signal));
  } finally {
    held.release();
    progress.stop();
    if (signal.aborted) {
      // Connections dropped on purpose are no warning for the pool to log after what was said.
      Logger.overrideLogger(false);
      // Whatever is still in flight (an interrupted read) ends with its connection: PostgreSQL rolls back.
      for (const connection of connections) connection.drop(signal.reason as Error);
    }
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
    await embedded?.stop();
  }
}

/** A stream that holds what is written to it until released, then writes through to `target`. */
class HeldLines extends Writable {
  private chunks: (string | Buffer)[] | undefined = [];

  constructor(private readonly target: NodeJS.WritableStream) {
    super();
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.chunks) this.chunks.push(chunk);
    else this.target.write(chunk);
    done();
  }

  /** Writes what was held, and from now on writes through. */
  release(): void {
    const chunks = this.chunks ?? [];
    this.chunks = undefined;
    for (const chunk of chunks) this.target.write(chunk);
  }
}

/** `work`, or the interrupt's reason as soon as `signal` is aborted (what `work` still does is left to end). */
function abandonable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((done, fail) => {
    const stop = (): void => fail(signal.reason as Error);
    signal.addEventListener('abort', stop, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', stop);
        done(value);
      },
      (error: Error) => {
        signal.removeEventListener('abort', stop);
        fail(error);
      },
    );
  });
}

/** The DataSource's options with every connection it opens kept in `connections` until it ends (to drop them on an interrupt). */
function trackedConnections(options: DataSourceOptions, connections: Set<TimedClient>): DataSourceOptions {
  const extra = (options as { extra?: { Client?: new (config?: unknown) => TimedClient } }).extra ?? {};
  const Base = extra.Client;
  if (Base === undefined) return options;
  class Tracked extends Base {
    constructor(config?: unknown) {
      super(config);
      connections.add(this);
      this.once('end', () => connections.delete(this));
    }
  }
  return { ...options, extra: { ...extra, Client: Tracked } };
}

/** An error PostgreSQL answered that still means "cannot connect here": authentication, no such database or role. */
function refusedConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('28') || code === '3D000');
}

/** A PostgreSQL URL as a message names it: role, host, port and database, never the password. */
function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const role = parsed.username ? `${decodeURIComponent(parsed.username)}@` : '';
    return `the database ${decodeURIComponent(parsed.pathname.slice(1)) || '(default)'} at ${role}${parsed.hostname || 'localhost'}:${parsed.port || 5432}`;
  } catch {
    return 'the database';
  }
}

/**
 * What pg_stat_activity shows of this run (application_name): `pricing <command> <actor>@<host>`,
 * printable ASCII (PostgreSQL keeps no other), at most 63 characters: what a writer waiting for the
 * price book's lock names.
 */
function applicationName(name: CommandName, command: DatabaseCommand): string {
  const actor = 'author' in command ? `${command.author.actor}@` : '';
  const text = `pricing ${name} ${actor}${hostname()}`.replace(/[^\x20-\x7e]/g, '?');
  return text.slice(0, 63);
}

/** Colour in log lines only on a terminal that has it and is not told otherwise (NO_COLOR, TERM=dumb). */
function colourWanted(io: CliIo): boolean {
  return io.stderr.isTTY === true && io.env.NO_COLOR === undefined && io.env.TERM !== 'dumb';
}

/** The CLI's version: the package's, the schema it migrates to (its last migration), Node.js's. */
function versionOf(): { readonly version: string; readonly schema: string; readonly node: string } {
  const migrations = appDatabaseOptions('postgres://localhost/none').migrations as { name: string }[];
  const last = migrations
    .map((migration) => migration.name)
    .sort((a, b) => Number(a.slice(-13)) - Number(b.slice(-13)));
  return { version: packageVersion(), schema: last[last.length - 1] ?? 'none', node: process.version };
}

function versionText(): string {
  const { version, schema, node } = versionOf();
  return `pricing-control-plane ${version} (schema ${schema}, Node.js ${node})`;
}

/** The version in the project's package.json, found upwards from this file (its source, or its build in dist/). */
function packageVersion(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const found = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (found.name === 'pricing-control-plane') return found.version ?? 'unknown';
  }
  return 'unknown';
}
