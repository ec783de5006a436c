// The price book CLI's exit codes (docs/price-book-cli.md, "Exit codes"): one meaning each, so that
// a script tells a refused book from a database that is down, a lock held too long or a Ctrl-C.
// Small numbers for what the price book says; 64 for usage (sysexits.h's EX_USAGE: 2 is
// --detailed-exitcode's "changes", as Terraform's plan has it); 128 + the signal for an interrupt,
// as a shell reports a process a signal ended.

export const EXIT = {
  /** Done; a dry run or a book with nothing to change. */
  ok: 0,
  /** Failed for a reason none of the others name (a bug, a database error mid-command). */
  failed: 1,
  /** `import --dry-run --detailed-exitcode`: the book would change the price book. */
  changes: 2,
  /** Refused: the book, the plan, the usage file, or the change they ask for. Nothing written. */
  refused: 3,
  /** `verify`: the change log does not prove the book. */
  notProven: 4,
  /** The database cannot be reached, or refused the connection. Nothing written. */
  unreachable: 5,
  /** The price book stayed locked by another writer longer than --lock-timeout. Nothing written. */
  locked: 6,
  /**
   * The configuration is refused: DATABASE_URL unset with NODE_ENV=production, a bad value, a role
   * that may not write the price book, a database whose group roles are missing.
   */
  configuration: 7,
  /** The database lacks migrations a command that does not migrate needs (`npm run migrate`). */
  notMigrated: 8,
  /** Wrong usage: an unknown command or option, a missing or malformed value. */
  usage: 64,
  /** Ctrl-C (SIGINT): stopped, the write rolled back. */
  interrupted: 130,
  /** SIGTERM: stopped, the write rolled back. */
  terminated: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code of a stop by `signal`: 128 + its number, as a shell reports it. */
export function exitOfSignal(signal: 'SIGINT' | 'SIGTERM'): ExitCode {
  return signal === 'SIGINT' ? EXIT.interrupted : EXIT.terminated;
}
