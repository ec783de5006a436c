// What goes into a log line, bounded: every function here is one pass over its text, with no
// regular expression that could backtrack, so that no text a client chooses can hold the event
// loop (test/hostile.e2e-spec.ts sends 14 KB request-targets).

/** A URL in a log line is cut to this many characters, and says so. */
export const MAX_LOGGED_URL = 1024;
/** No log line is longer, in bytes (newline included). */
export const MAX_LOG_LINE_BYTES = 4096;
/** A string field of an over-long line is cut to this first, and to CUT_HARDER if that is not enough. */
const CUT_FIELD = 1024;
const CUT_HARDER = 128;

export const REDACTED = '[redacted]';

/** `text`, or its first `max` characters and how long it was. */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…[cut: ${text.length} characters in all]`;
}

/** A request's URL for a log line: at most MAX_LOGGED_URL characters of it. */
export function loggedUrl(url: string | undefined): string {
  return cutText(url ?? '', MAX_LOGGED_URL);
}

/**
 * Removes the passwords of URLs (`scheme://user:password@host`) and bearer tokens from a text that
 * is about to be logged: our own messages and the errors of libraries (a database driver's), never
 * request text, which is not scanned at all. Linear: each character is looked at a bounded number
 * of times.
 */
export function redactSecrets(text: string): string {
  return redactBearerTokens(redactUrlPasswords(text));
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c || c === 0x0b;
}

/**
 * After each `://`: a user (up to `:`, `@`, `/` or a space) and `:` start a password, which runs
 * to the `@` before the next space. When no `@` comes before that space, no later `://` before it
 * can have one either, so the search goes on after the space: each character is read once.
 */
function redactUrlPasswords(text: string): string {
  let out = '';
  let copied = 0;
  let at = text.indexOf('://');
  while (at !== -1) {
    let i = at + 3;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x3a /* : */ || c === 0x40 /* @ */ || c === 0x2f /* / */ || isSpace(c)) break;
      i++;
    }
    if (i >= text.length || text.charCodeAt(i) !== 0x3a) {
      at = text.indexOf('://', Math.max(i, at + 3));
      continue;
    }
    const passwordStart = i + 1;
    let end = passwordStart;
    while (end < text.length && text.charCodeAt(end) !== 0x40 && !isSpace(text.charCodeAt(end))) end++;
    if (end < text.length && text.charCodeAt(end) === 0x40 && end > passwordStart) {
      out += `${text.slice(copied, passwordStart)}${REDACTED}`;
      copied = end;
    }
    at = text.indexOf('://', end);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

const TOKEN_ENDS = new Set([0x22 /* " */, 0x27 /* ' */, 0x2c /* , */, 0x3b /* ; */]);

function isWordCharacter(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

/** `Bearer <token>` (any case, as a word) with the token replaced. */
function redactBearerTokens(text: string): string {
  // ASCII only: toLowerCase() may change the length of other text, and indices must match.
  const lower = text.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
  let out = '';
  let copied = 0;
  let at = lower.indexOf('bearer');
  while (at !== -1) {
    let i = at + 6;
    const startsWord = at === 0 || !isWordCharacter(lower.charCodeAt(at - 1));
    let spaces = i;
    while (spaces < text.length && isSpace(text.charCodeAt(spaces))) spaces++;
    if (startsWord && spaces > i) {
      let end = spaces;
      while (end < text.length && !isSpace(text.charCodeAt(end)) && !TOKEN_ENDS.has(text.charCodeAt(end))) end++;
      if (end > spaces) {
        out += `${text.slice(copied, spaces)}${REDACTED}`;
        copied = end;
      }
      i = end;
    }
    at = lower.indexOf('bearer', i);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * A JSON log line of at most MAX_LOG_LINE_BYTES: as it is when it fits (the common case costs a
 * length check), else with every long string field cut (marked `"truncated": true`), else only
 * its level, time, context and the start of its message.
 */
export function boundLogLine(line: string): string {
  if (line.length * 3 <= MAX_LOG_LINE_BYTES || Buffer.byteLength(line) <= MAX_LOG_LINE_BYTES) return line;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return `${JSON.stringify({ msg: cutText(line, CUT_HARDER), truncated: true })}\n`;
  }
  for (const max of [CUT_FIELD, CUT_HARDER]) {
    const cut = `${JSON.stringify({ ...(cutStrings(parsed, max) as object), truncated: true })}\n`;
    if (Buffer.byteLength(cut) <= MAX_LOG_LINE_BYTES) return cut;
  }
  const { level, time, pid, hostname, context, msg } = parsed;
  const kept = {
    level,
    time,
    pid,
    hostname,
    context,
    msg: cutText(typeof msg === 'string' ? msg : '', CUT_HARDER),
    truncated: true,
  };
  return `${JSON.stringify(kept)}\n`;
}

function cutStrings(value: unknown, max: number): unknown {
  if (typeof value === 'string') return cutText(value, max);
  if (Array.isArray(value)) return value.map((item) => cutStrings(item, max));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cutStrings(item, max)]));
  }
  return value;
}
