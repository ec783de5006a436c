import {
  ChangeLogMismatchError,
  PriceBookCommittedError,
  PriceBookCommitUnknownError,
  PriceBookLockedError,
  PriceBookRefusedError,
  PricingError,
  PricingErrorCode,
  PublicationMissedError,
} from '../errors/pricing-error';
import { CliInterruptedError, cliFailure, DatabaseUnreachableError, SchemaNotMigratedError } from './cli-failure';
import { PriceBookUsageError } from './command-line';
import { EXIT } from './exit-codes';
import { PriceBookFileError } from './price-book-file';

// Every error the library raises is a PricingError with a code (docs/using-pricing.md, "Errors"),
// the CLI's included; the CLI prints their messages and exits as docs/price-book-cli.md says.

const cause = new Error('stdout is closed');
const committed = new PriceBookCommittedError(new Date('2026-06-01T12:00:00.250Z'), '7', 'printing it', cause);

describe("the price book CLI's errors", () => {
  it.each([
    [committed, PricingErrorCode.PriceBookCommitted],
    [new PriceBookCommitUnknownError(cause), PricingErrorCode.PriceBookCommitUnknown],
    [new PriceBookFileError('book.json: not JSON'), PricingErrorCode.PriceBookFile],
    [new PriceBookUsageError('a command is needed'), PricingErrorCode.PriceBookUsage],
    [new PriceBookLockedError(undefined, 1000), PricingErrorCode.PriceBookLocked],
  ])('%s is a PricingError with its code', (error, code) => {
    expect(error).toBeInstanceOf(PricingError);
    expect(error.code).toBe(code);
    expect(error.name).toBe(error.constructor.name);
  });

  it('say what is known of a write that committed, or may have', () => {
    expect(committed.message).toBe(
      'applied at 2026-06-01T12:00:00.250Z (version 7): the change was committed and is in force, but printing it failed: stdout is closed',
    );
    expect(committed.details).toEqual({ instant: '2026-06-01T12:00:00.250Z', version: '7' });
    expect(new PriceBookCommitUnknownError(cause).message).toBe(
      'the connection to the database failed while the change was being committed, so it may or may not be in force ' +
        '(stdout is closed); look with history or export before writing it again',
    );
  });

  it('end the CLI with 64 and a pointer to the help for wrong usage', () => {
    expect(cliFailure(new PriceBookUsageError('a command is needed'))).toMatchObject({
      exit: 64,
      message: "a command is needed\nRun 'npm run -s pricing -- help' for the commands.",
    });
    expect(cliFailure(new PriceBookUsageError('--since is given twice', 'changes')).message).toBe(
      "--since is given twice\nRun 'npm run -s pricing -- changes --help' for its options and examples.",
    );
  });

  it.each([
    [new PriceBookRefusedError(['prices[0].amount: no']), EXIT.refused],
    [new PublicationMissedError(new Date(0), cause), EXIT.refused],
    [new PriceBookFileError('book.json: not JSON'), EXIT.refused],
    [new ChangeLogMismatchError(['entry 3 does not match'], 3), EXIT.notProven],
    [new PriceBookLockedError(undefined, 1000), EXIT.locked],
    [new DatabaseUnreachableError('the database x', cause, true), EXIT.unreachable],
    [new SchemaNotMigratedError('show only reads'), EXIT.notMigrated],
    [new CliInterruptedError('SIGINT', 'rolled back, nothing was written'), EXIT.interrupted],
    [new CliInterruptedError('SIGTERM', 'rolled back, nothing was written'), EXIT.terminated],
    [committed, EXIT.failed],
    [new PriceBookCommitUnknownError(cause), EXIT.failed],
  ])('end the CLI with a code of its own for %s, and its message as it is', (error, exit) => {
    const failure = cliFailure(error);
    expect(failure.exit).toBe(exit);
    expect(failure.message).toBe(error.message);
    expect(failure.json).toEqual({
      error: expect.objectContaining({ code: error.code, exit_code: exit, message: error.message }),
    });
  });

  it('say "nothing was written" of another failure only for a command that writes', () => {
    expect(cliFailure(cause, { writes: true })).toMatchObject({
      exit: 1,
      message: 'failed, nothing was written: stdout is closed',
    });
    expect(cliFailure(cause)).toMatchObject({ exit: 1, message: 'failed: stdout is closed' });
    expect(cliFailure(cause).json).toEqual({
      error: { code: 'FAILED', exit_code: 1, message: 'failed: stdout is closed' },
    });
  });

  it("end with the host's own codes for the errors it explains", () => {
    class HostError extends Error {}
    expect(
      cliFailure(new HostError('DATABASE_URL is required'), {
        explained: [{ type: HostError, exit: EXIT.configuration, code: 'CONFIGURATION' }],
      }),
    ).toEqual({
      exit: 7,
      message: 'DATABASE_URL is required',
      json: { error: { code: 'CONFIGURATION', exit_code: 7, message: 'DATABASE_URL is required' } },
    });
  });
});
