// What the page server reads of a request's caching headers, for serve.mjs: Accept-Encoding and
// If-None-Match, by the rules the API's price list follows (libs/pricing/src/http/accept-encoding.ts
// and rendering/entity-tag.ts, which this plain JavaScript cannot import: serve.mjs runs without a
// build). Total and linear: any text gives an answer, no pattern can backtrack over it.

/** The codings a file is kept in besides the plain bytes, in order of preference at equal weight. */
const ENCODED = ['br', 'gzip'];

/** weight = OWS ";" OWS "q=" qvalue (RFC 9110 12.4.2), on one trimmed element. */
const CODING_WITH_WEIGHT = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:[ \t]*;[ \t]*[qQ]=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?))?$/;

/**
 * The coding to answer with, from `Accept-Encoding` (RFC 9110 12.5.3): `br`, `gzip` or
 * `identity`, as the price list negotiates it (docs/decisions.md, "Compression"): highest weight,
 * br before gzip before the plain bytes at equal weight, `q=0` refuses, `*` weighs what is not
 * named, `x-gzip` is gzip, a malformed element counts as absent, and the plain bytes when nothing
 * else is acceptable.
 */
export function preferredCoding(acceptEncoding) {
  if (typeof acceptEncoding !== 'string' || acceptEncoding === '') return 'identity';
  const weights = new Map();
  // Element by element, not split(','): no array as long as a header of commas.
  for (let start = 0; start <= acceptEncoding.length;) {
    const comma = acceptEncoding.indexOf(',', start);
    const end = comma === -1 ? acceptEncoding.length : comma;
    const match = CODING_WITH_WEIGHT.exec(acceptEncoding.slice(start, end).trim());
    start = end + 1;
    if (!match) continue;
    const coding = match[1].toLowerCase();
    weights.set(coding === 'x-gzip' ? 'gzip' : coding, match[2] === undefined ? 1 : Number(match[2]));
  }
  const any = weights.get('*');
  let best = 'identity';
  let bestWeight = weights.get('identity') ?? any ?? 0;
  for (const coding of ENCODED) {
    const weight = weights.get(coding) ?? any ?? 0;
    if (weight > 0 && weight >= bestWeight && (best === 'identity' || weight > bestWeight)) {
      best = coding;
      bestWeight = weight;
    }
  }
  return best;
}

const OWS = new Set([0x20, 0x09]);

/**
 * RFC 9110 13.1.2 `If-None-Match` with weak comparison: `*`, or a list of entity tags one of which
 * is `etag` in its weak or strong form. A malformed header matches nothing (the file is sent).
 */
export function ifNoneMatchMatches(header, etag) {
  if (typeof header !== 'string') return false;
  if (header.trim() === '*') return true;
  const current = opaque(etag);
  let i = 0;
  let matched = false;
  const n = header.length;
  while (i < n) {
    while (i < n && (OWS.has(header.charCodeAt(i)) || header[i] === ',')) i++;
    if (i >= n) break;
    const start = header.startsWith('W/', i) ? i + 2 : i;
    i = start;
    if (header[i] !== '"') return false;
    i++;
    while (i < n && header[i] !== '"') {
      const c = header.charCodeAt(i);
      if (c < 0x21 || c === 0x7f || c > 0xff) return false;
      i++;
    }
    if (i >= n) return false; // unterminated
    i++;
    if (header.slice(start, i) === current) matched = true;
    while (i < n && OWS.has(header.charCodeAt(i))) i++;
    if (i < n && header[i] !== ',') return false;
  }
  return matched;
}

function opaque(tag) {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
