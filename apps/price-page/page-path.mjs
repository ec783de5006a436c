// Which of the price page's paths a request-target names, for serve.mjs. A lookup in a fixed
// allow-list, so no filesystem path is ever built from request text; one pass over the target
// with no regular expression and no URL parser (new URL throws on a bad port, and would read
// "//etc/passwd" as a host). Total: any string gives 200 with a page path, 400 or 404.

/** Every path the page server answers 200 on (serve.mjs maps each to a file or to /config.js). */
export const PAGE_PATHS = Object.freeze([
  '/',
  '/config.js',
  '/style.css',
  '/app.js',
  '/prices.mjs',
  '/vendor/decimal.mjs',
]);

/** Decoded path → page path: the page's own paths, and /index.html for /. */
const LOOKUP = new Map([...PAGE_PATHS.map((path) => [path, path]), ['/index.html', '/']]);

/**
 * The longest request path that can name a page path: every character percent-encoded. Longer
 * paths are 404 before any decoding, so decoding work is bounded whatever the target's length.
 */
const MAX_PATH = 3 * Math.max(...[...LOOKUP.keys()].map((path) => path.length));

const BAD_REQUEST = Object.freeze({ status: 400 });
const NOT_FOUND = Object.freeze({ status: 404 });

const SLASH = 0x2f;
const COLON = 0x3a;

/**
 * The page path `target` (a request-target as Node.js gives it in req.url) names:
 * `{ status: 200, path }` with `path` one of PAGE_PATHS, `{ status: 404 }` for a well-formed
 * target naming no page file, `{ status: 400 }` for a malformed one.
 *
 * - origin-form (`/app.js?x`): the path, query dropped;
 * - absolute-form (`http://host:port/app.js`), which RFC 9112 section 3.2.2 says a server must
 *   accept: the authority is checked (a port above 65535, userinfo or an unclosed `[` is 400) and
 *   otherwise ignored, as the page has one origin; the path is then read as in origin-form;
 * - anything else (`*`, authority-form, other schemes): 400.
 *
 * Segments are percent-decoded one by one (bad encoding or UTF-8 is 400); an encoded `/` is data,
 * not a separator. Dot-segments are not resolved: clients remove them before sending, so `/..`
 * names no page file (404).
 */
export function pageTarget(target) {
  if (typeof target !== 'string' || target.length === 0) return BAD_REQUEST;
  let start = 0;
  if (target.charCodeAt(0) !== SLASH) {
    const authority = authorityStart(target);
    if (authority < 0) return BAD_REQUEST;
    let end = authority;
    while (end < target.length && !'/?#'.includes(target[end])) end++;
    if (!validAuthority(target, authority, end)) return BAD_REQUEST;
    if (end === target.length || target.charCodeAt(end) !== SLASH) return found('/');
    start = end;
  }
  let end = start;
  while (end < target.length && target[end] !== '?' && target[end] !== '#') end++;
  if (end - start > MAX_PATH) return NOT_FOUND;

  let path = '';
  for (const segment of target.slice(start + 1, end).split('/')) {
    let decoded = segment;
    if (segment.includes('%')) {
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        return BAD_REQUEST;
      }
      if (decoded.includes('/')) return NOT_FOUND;
    }
    path += `/${decoded}`;
  }
  return found(path);
}

function found(path) {
  const page = LOOKUP.get(path);
  return page === undefined ? NOT_FOUND : { status: 200, path: page };
}

/** The index just after `http://` or `https://` (any case) at the start of `target`, or -1. */
function authorityStart(target) {
  const lower = target.slice(0, 8).toLowerCase();
  if (lower.startsWith('http://')) return 7;
  if (lower.startsWith('https://')) return 8;
  return -1;
}

/**
 * Whether target[from, to) is an http(s) authority: a non-empty host (a name or IPv4 address of
 * RFC 3986's reg-name characters, or an IPv6 literal in brackets) and an optional port of at most
 * 65535. Userinfo is refused, as RFC 9110 section 4.2.4 asks.
 */
function validAuthority(target, from, to) {
  let i = from;
  if (target[i] === '[') {
    i++;
    while (i < to && isIpv6Char(target.charCodeAt(i))) i++;
    if (i === from + 1 || target[i] !== ']') return false;
    i++;
  } else {
    while (i < to && isRegNameChar(target.charCodeAt(i))) i++;
    if (i === from) return false;
  }
  if (i === to) return true;
  if (target.charCodeAt(i) !== COLON) return false;
  let port = 0;
  for (i++; i < to; i++) {
    const digit = target.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return false;
    port = port * 10 + digit;
    if (port > 65535) return false;
  }
  return true;
}

function isIpv6Char(code) {
  return isHexDigit(code) || code === COLON || code === 0x2e; // '.' for an embedded IPv4 address
}

function isHexDigit(code) {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

/** RFC 3986 reg-name: unreserved, sub-delims and '%' (of pct-encoded). */
function isRegNameChar(code) {
  if ((code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) return true;
  return code < 0x80 && "-._~!$&'()*+,;=%".includes(String.fromCharCode(code));
}
