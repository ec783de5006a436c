import {
  ChangeLogMismatchError,
  InvalidUsageError,
  PriceBookCommittedError,
  PriceBookCommitUnknownError,
  PriceBookRefusedError,
  PublicationMissedError,
} from '../errors/pricing-error';
import { PRICE_BOOK_USAGE, PriceBookUsageError } from './command-line';
import { PriceBookFileError } from './price-book-file';

/** An error class whose message the CLI prints as it is. */
export type ExplainedError = abstract new (...args: never[]) => Error;

/**
 * How the price book CLI ends on an error (docs/price-book-cli.md, "Exit codes"): 2 and the usage
 * for wrong usage; 1 for a refusal (its message as it is: the book's problems, a bad file, and the
 * host's `explained` errors, usage `focus` cannot price), for a change log that does not prove the book (`verify`, its message
 * as it is), for a write that committed before something failed (its message says the change is
 * in force) or whose commit was cut off (it may be in force: its message says so), or for any
 * other failure, with nothing written.
 */
export function cliFailure(
  error: unknown,
  explained: readonly ExplainedError[] = [],
): { readonly code: 1 | 2; readonly message: string } {
  if (error instanceof PriceBookUsageError) return { code: 2, message: `${error.message}\n\n${PRICE_BOOK_USAGE}` };
  const known = [
    PriceBookRefusedError,
    PublicationMissedError,
    PriceBookCommittedError,
    PriceBookCommitUnknownError,
    PriceBookFileError,
    ChangeLogMismatchError,
    InvalidUsageError,
    ...explained,
  ];
  if (known.some((type) => error instanceof type)) return { code: 1, message: (error as Error).message };
  return {
    code: 1,
    message: `failed, nothing was written: ${error instanceof Error ? error.message : String(error)}`,
  };
}
