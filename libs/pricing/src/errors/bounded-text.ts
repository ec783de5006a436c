// Messages quote text from outside (a price book, the command line) without repeating it at
// length: a hostile book must not turn a refusal into megabytes on a terminal or in a log.

/** How much of a value from outside a message quotes. */
export const MAX_QUOTED_CHARACTERS = 80;
/** How many problems a refusal lists before `and N more`. */
export const MAX_LISTED_PROBLEMS = 50;
/** How much of a message written by someone else (JSON.parse, parseArgs) is repeated. */
const MAX_FOREIGN_MESSAGE = 200;

/**
 * What a terminal may act on or hide, and what does not read as what it is: control characters
 * (C0, DEL, C1: escape sequences, line breaks), format characters (bidirectional overrides and
 * isolates, zero-width spaces and joiners, the byte order mark), line and paragraph separators,
 * lone surrogates, private-use and unassigned code points.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/gu;
const AN_UNPRINTABLE = new RegExp(UNPRINTABLE.source, 'u');
/**
 * As UNPRINTABLE but for C0 controls: in JSON text, those are escaped inside strings already
 * (JSON.stringify), and between tokens they are white space (the line breaks of pretty JSON).
 */
const UNPRINTABLE_IN_JSON = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/gu;
/** As UNPRINTABLE, and a backslash (the escapes' own mark) and any space: what one word of a line may not show as it is. */
const NOT_IN_A_WORD = /[\\\p{Zs}\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/gu;

/** Each UTF-16 unit of `text` as a `\uXXXX` escape (a backslash as `\\`). */
function escapeUnits(text: string): string {
  if (text === '\\') return '\\\\';
  let escaped = '';
  for (let i = 0; i < text.length; i++) escaped += `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return escaped;
}

/**
 * The one escaping of the text the library prints: every unprintable character (UNPRINTABLE) as a
 * `\uXXXX` escape, one per UTF-16 unit. escapeJson and escapeWord are its forms for JSON text and
 * for one word of a line.
 */
export function escapeUnprintable(text: string): string {
  return text.replace(UNPRINTABLE, escapeUnits);
}

/**
 * JSON text (JSON.stringify's, pretty or not) with its unprintable characters escaped as
 * escapeUnprintable does: U+2028, U+2029, DEL, C1 and format characters (bidirectional controls
 * among them), which JSON.stringify leaves raw. Those only occur inside its strings, so the text
 * reads back as the same value.
 */
export function escapeJson(json: string): string {
  return json.replace(UNPRINTABLE_IN_JSON, escapeUnits);
}

/**
 * A value from the database as one word of a line of text (`changes`, `history`): unprintable
 * characters escaped as escapeUnprintable does, and spaces and backslashes too (`\u0020`, `\\`), so
 * that a stored value can neither act on the terminal nor pass for two columns, and its escapes
 * read back unambiguously. Printable text without spaces or backslashes is unchanged; the empty
 * text is `""`.
 */
export function escapeWord(text: string): string {
  // An empty value is still a word: a column left blank would merge with the next.
  return text === '' ? '""' : text.replace(NOT_IN_A_WORD, escapeUnits);
}

/** Whether `text` holds a character that escapeUnprintable escapes. */
export function hasUnprintable(text: string): boolean {
  return AN_UNPRINTABLE.test(text);
}

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
  return escapeUnprintable(cutText(message, MAX_FOREIGN_MESSAGE));
}

function quote(text: string): string {
  return escapeJson(JSON.stringify(text));
}

/** The first `max` UTF-16 units of `text`, without half of a surrogate pair at the end. */
function headOf(text: string, max: number): string {
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
