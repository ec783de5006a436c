import { CodedError } from '@app/errors';
import {
  ChangeLogMismatchError,
  InvalidUsageError,
  PriceBookCommittedError,
  PriceBookCommitUnknownError,
  PriceBookLockedError,
  PriceBookRefusedError,
  PriceBookWriteDeniedError,
  PublicationMissedError,
} from '../errors/pricing-error';
import { PriceBookUsageError } from './command-line';
import { EXIT, exitOfSignal, type ExitCode } from './exit-codes';
import { PriceBookFileError } from './price-book-file';

// How the price book CLI ends on an error (docs/price-book-cli.md, "Exit codes"): an exit code of
// its own for each kind of failure, the message on stderr, as JSON with --json.

/** Ctrl-C or SIGTERM stopped the command: what was being written was rolled back. */
export class CliInterruptedError extends CodedError<'INTERRUPTED'> {
  constructor(
    readonly signal: 'SIGINT' | 'SIGTERM',
    /** What it was doing, and what became of it. */
    what: string,
  ) {
    super('INTERRUPTED', `interrupted by ${signal}${signal === 'SIGINT' ? ' (Ctrl-C)' : ''}: ${what}`, { signal });
  }
}

/** The database could not be connected to (refused, unknown host, timed out, authentication). Nothing was written. */
export class DatabaseUnreachableError extends CodedError<'DATABASE_UNREACHABLE'> {
  constructor(
    where: string,
    override readonly cause: unknown,
    writes: boolean,
  ) {
    super(
      'DATABASE_UNREACHABLE',
      `cannot connect to ${where}: ${cause instanceof Error ? cause.message : String(cause)}` +
        (writes ? '; nothing was written' : ''),
    );
  }
}

/**
 * A command that does not migrate (one that only reads, a dry run) met a database that lacks the
 * migrations it needs: it changes nothing, not even that. `pending` names them; empty when the
 * database has no price book schema at all, or none to migrate.
 */
export class SchemaNotMigratedError extends CodedError<'SCHEMA_NOT_MIGRATED'> {
  constructor(
    message: string,
    readonly pending: readonly string[] = [],
  ) {
    super('SCHEMA_NOT_MIGRATED', message, pending.length > 0 ? { pending } : {});
  }

  /** `command` (which does not migrate, `why`) on a database that lacks `pending`. */
  static pending(command: string, why: string, pending: readonly string[]): SchemaNotMigratedError {
    return new SchemaNotMigratedError(
      `${command} ${why}, but the database lacks migrations: ${pending.join(', ')}. Run \`npm run migrate\` first.`,
      pending,
    );
  }
}

/** An error class the CLI's host ends with as it is, with its own exit code and code (ConfigurationError: 7). */
export interface ExplainedError {
  readonly type: abstract new (...args: never[]) => Error;
  readonly exit: ExitCode;
  readonly code: string;
}

/** How a run ends on an error: its exit code, its message, and the same as JSON (for --json). */
export interface CliFailure {
  readonly exit: ExitCode;
  readonly message: string;
  /** `{ "error": { "code", "exit_code", "message", ...details } }` */
  readonly json: Readonly<Record<string, unknown>>;
}

/** What the failure of a command may say of the database: whether it writes (only then "nothing was written"). */
export interface FailureContext {
  /** The command writes the price book (import, apply, withdraw): an unknown failure says that nothing was written. */
  readonly writes?: boolean;
  readonly explained?: readonly ExplainedError[];
}

/**
 * The exit code and message of `error` (docs/price-book-cli.md, "Exit codes"): 64 and a pointer to
 * the usage for wrong usage; 3 for a refusal (the book's problems, a bad file, usage `focus` cannot
 * price, a publication missed), 4 for a change log that does not prove the book, 6 for a lock held
 * too long, 5, 7 and 8 for a database that cannot be reached, a configuration refused and missing
 * migrations, 130 and 143 for an interrupt; 1 for a write that committed before something failed
 * (its message says the change is in force) or whose commit was cut off (it may be in force), and
 * for anything else: "failed", and "nothing was written" only for a command that writes.
 */
export function cliFailure(error: unknown, context: FailureContext = {}): CliFailure {
  const of = (exit: ExitCode, code: string, message: string, details: Record<string, unknown> = {}): CliFailure => ({
    exit,
    message,
    json: { error: { code, exit_code: exit, message, ...details } },
  });
  if (error instanceof PriceBookUsageError) {
    return of(EXIT.usage, error.code, `${error.message}\n${error.hint}`, { hint: error.hint });
  }
  if (error instanceof CliInterruptedError)
    return of(exitOfSignal(error.signal), error.code, error.message, error.details);
  const explained = context.explained?.find(({ type }) => error instanceof type);
  if (explained) {
    const { message } = error as Error;
    const details = error instanceof CodedError ? error.details : {};
    return of(explained.exit, explained.code, message, { ...details });
  }
  const known: [abstract new (...args: never[]) => CodedError, ExitCode][] = [
    [PriceBookRefusedError, EXIT.refused],
    [PublicationMissedError, EXIT.refused],
    [PriceBookFileError, EXIT.refused],
    [InvalidUsageError, EXIT.refused],
    [ChangeLogMismatchError, EXIT.notProven],
    [PriceBookLockedError, EXIT.locked],
    // DATABASE_URL names a role that may only read: a configuration to correct, not a book.
    [PriceBookWriteDeniedError, EXIT.configuration],
    [DatabaseUnreachableError, EXIT.unreachable],
    [SchemaNotMigratedError, EXIT.notMigrated],
    [PriceBookCommittedError, EXIT.failed],
    [PriceBookCommitUnknownError, EXIT.failed],
  ];
  const kind = known.find(([type]) => error instanceof type);
  if (kind) {
    const coded = error as CodedError;
    return of(kind[1], coded.code, coded.message, { ...coded.details });
  }
  const reason = error instanceof Error ? error.message : String(error);
  return of(EXIT.failed, 'FAILED', context.writes ? `failed, nothing was written: ${reason}` : `failed: ${reason}`);
}
