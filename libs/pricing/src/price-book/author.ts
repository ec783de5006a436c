import { hasUnprintable } from '../errors/bounded-text';

// Who made a write of the price book, and why: recorded on every row of its change log
// (database/migrations/1764000005000-change-log-authors.ts holds the same rules).

export interface Author {
  /** 1 to 100 of `A-Z a-z 0-9 . _ @ + -`: a user name or an e-mail address. */
  readonly actor: string;
  /** 1 to 500 printable characters; `null` when none was given. */
  readonly reason: string | null;
}

const ACTOR = /^[A-Za-z0-9._@+-]{1,100}$/;
export const MAX_REASON_LENGTH = 500;

/** What is wrong with an actor, or `undefined`. Length first: a long text costs nothing. */
export function actorProblem(actor: string): string | undefined {
  return actor.length <= 100 && ACTOR.test(actor)
    ? undefined
    : 'an actor is 1 to 100 letters, digits or ". _ @ + -" (a user name or an e-mail address)';
}

/** What is wrong with a reason, or `undefined`. Its length is counted in characters (code points). */
export function reasonProblem(reason: string): string | undefined {
  // A code point is at most two UTF-16 units: a longer text is refused before it is counted.
  if (reason.length > 2 * MAX_REASON_LENGTH || [...reason].length > MAX_REASON_LENGTH) {
    return `a reason has at most ${MAX_REASON_LENGTH} characters`;
  }
  if (reason.trim() === '') return 'a reason, when given, is not empty';
  // What a printable line does not hold: control characters (line breaks and tabs included), format
  // characters (bidirectional overrides, zero-width spaces: text that reads other than it is),
  // line and paragraph separators, lone surrogates, private-use and unassigned code points.
  return hasUnprintable(reason) ? 'a reason is one line of printable characters' : undefined;
}
