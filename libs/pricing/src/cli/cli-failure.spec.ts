import {
  PriceBookCommittedError,
  PriceBookCommitUnknownError,
  PricingError,
  PricingErrorCode,
} from '../errors/pricing-error';
import { cliFailure } from './cli-failure';
import { PRICE_BOOK_USAGE, PriceBookUsageError } from './command-line';
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

  it('end the CLI with 2 and the usage for wrong usage, 1 and the message for the rest', () => {
    expect(cliFailure(new PriceBookUsageError('a command is needed'))).toEqual({
      code: 2,
      message: `a command is needed\n\n${PRICE_BOOK_USAGE}`,
    });
    for (const error of [
      committed,
      new PriceBookCommitUnknownError(cause),
      new PriceBookFileError('book.json: not JSON'),
    ]) {
      expect(cliFailure(error)).toEqual({ code: 1, message: error.message });
    }
    expect(cliFailure(cause)).toEqual({ code: 1, message: 'failed, nothing was written: stdout is closed' });
  });
});
