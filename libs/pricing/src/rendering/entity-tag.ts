import { createHash } from 'node:crypto';

/** Weak ETag computed from the body bytes alone: the same body has the same tag everywhere. */
export function weakEntityTag(body: Buffer): string {
  return weakEntityTagOfDigest(createHash('sha256').update(body).digest());
}

/** The weak ETag of a body whose SHA-256 digest is `digest` (computed elsewhere: off the event loop). */
export function weakEntityTagOfDigest(digest: Buffer): string {
  return `W/"${digest.toString('base64url').slice(0, 32)}"`;
}

/**
 * RFC 9110 13.1.2 `If-None-Match` with weak comparison: `*`, or a list of entity tags, any of
 * which matches `currentTag` in its weak or strong form. A malformed header matches nothing,
 * so the client gets the full list.
 */
export function ifNoneMatchMatches(header: string | undefined, currentTag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const tags = parseEntityTagList(header);
  if (!tags) return false;
  const current = opaqueTag(currentTag);
  return tags.some((tag) => opaqueTag(tag) === current);
}

/**
 * RFC 9110 13.1.1 `If-Match` with strong comparison: `*` (a current representation exists: the
 * caller has one), or a list of entity tags one of which is `currentTag`, both strong and equal
 * character for character. A weak tag, ours included, never matches; neither does a malformed
 * header (the condition is then false, as the RFC says of anything but `*` or a matching list).
 */
export function ifMatchMatches(header: string, currentTag: string): boolean {
  if (header.trim() === '*') return true;
  const tags = parseEntityTagList(header);
  if (!tags || currentTag.startsWith('W/')) return false;
  return tags.some((tag) => tag === currentTag);
}

const OWS = new Set([0x20, 0x09]);

/**
 * Parses `#entity-tag` (RFC 9110 5.6.1, 8.8.3): entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE,
 * etagc = %x21 / %x23-7E / obs-text, so an opaque tag may itself hold commas. Empty list
 * elements are allowed. Returns `undefined` when the header is malformed.
 */
export function parseEntityTagList(header: string): string[] | undefined {
  const tags: string[] = [];
  let i = 0;
  const n = header.length;
  while (i < n) {
    while (i < n && (OWS.has(header.charCodeAt(i)) || header[i] === ',')) i++;
    if (i >= n) break;
    const start = i;
    if (header.startsWith('W/', i)) i += 2;
    if (header[i] !== '"') return undefined;
    i++;
    while (i < n && header[i] !== '"') {
      const c = header.charCodeAt(i);
      if (c < 0x21 || c === 0x7f || c > 0xff) return undefined;
      i++;
    }
    if (i >= n) return undefined; // unterminated
    i++;
    tags.push(header.slice(start, i));
    while (i < n && OWS.has(header.charCodeAt(i))) i++;
    if (i < n && header[i] !== ',') return undefined;
  }
  return tags.length > 0 ? tags : undefined;
}

function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
