// Messages quote text from outside (a price book, the command line) without repeating it at
// length: a hostile book must not turn a refusal into megabytes on a terminal or in a log.

/** How much of a value from outside a message quotes. */
export const MAX_QUOTED_CHARACTERS = 80;
/** How many problems a refusal lists before `and N more`. */
export const MAX_LISTED_PROBLEMS = 50;
/** How much of a message written by someone else (JSON.parse, parseArgs) is repeated. */
const MAX_FOREIGN_MESSAGE = 200;

/**
 * Characters a terminal may act on or hide, beyond what JSON escapes: DEL and C1 controls,
 * invisible and bidirectional formatting, line and paragraph separators.
 */
const UNSAFE = /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f]/g;

const escapeChar = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * A value from outside, quoted for a message: JSON string syntax (controls escaped), at most
 * MAX_QUOTED_CHARACTERS of it; a longer one is cut visibly, `"aaaa…" (1234 characters)`.
 */
export function quoteValue(value: string): string {
  if (value.length <= MAX_QUOTED_CHARACTERS) return quote(value);
  const head = headOf(value, MAX_QUOTED_CHARACTERS);
  return `${quote(head).slice(0, -1)}…" (${value.length} characters)`;
}

/** `text` with at most `max` characters of it, cut visibly: `aaaa… (1234 characters)`. */
export function cutText(text: string, max: number = MAX_QUOTED_CHARACTERS): string {
  return text.length <= max ? text : `${headOf(text, max)}… (${text.length} characters)`;
}

/** Problems, one a line (indented by two spaces after the first), at most MAX_LISTED_PROBLEMS, then `and N more`. */
export function listProblems(problems: readonly string[]): string {
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
  if (problems.length > MAX_LISTED_PROBLEMS) listed.push(`and ${problems.length - MAX_LISTED_PROBLEMS} more`);
  return listed.join('\n  ');
}

/**
 * A message of another library that may quote the text it failed on (JSON.parse quotes part
 * of the source): one line, controls escaped, at most MAX_FOREIGN_MESSAGE characters.
 */
export function foreignMessage(message: string): string {
  return cutText(message, MAX_FOREIGN_MESSAGE).replace(CONTROL, escapeChar).replace(UNSAFE, escapeChar);
}

function quote(text: string): string {
  return JSON.stringify(text).replace(UNSAFE, escapeChar);
}

/** The first `max` UTF-16 units of `text`, without half of a surrogate pair at the end. */
function headOf(text: string, max: number): string {
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
