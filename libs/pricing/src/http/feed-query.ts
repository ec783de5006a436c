import { parseProductKey } from '../catalogue/catalogue';
import { parseInstant } from '../core/instant';
import type { FeedPosition } from '../core/list-history';
import { FEED_START, MAX_CHANGES_PER_PAGE } from '../rendering/changes-page';

// The query of `GET /v1/pricing/changes` and its cursors (docs/decisions.md, "Prices as they
// were"): text any client writes, read in one pass, refused with a message that quotes none of it.

/** What a query asks for: changes after a cursor, or from an instant, at most `limit`. */
export interface FeedQuery {
  readonly after?: FeedPosition;
  readonly since?: number;
  readonly limit: number;
}

/** A cursor is `<at>~<product key>` in base64url: an instant of 17 characters at most, a key of 64. */
const MAX_CURSOR_LENGTH = 120;
const CURSOR = /^(-?\d{1,16})~([a-z0-9._]{0,64})$/;

/** The place a cursor names; `undefined` for anything this service did not write. */
export function decodeCursor(text: string): FeedPosition | undefined {
  if (text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  const decoded = Buffer.from(text, 'base64url');
  if (decoded.toString('base64url') !== text) return undefined; // not the one encoding of its bytes
  const m = CURSOR.exec(decoded.toString('latin1'));
  if (!m) return undefined;
  const at = Number(m[1]);
  if (Math.abs(at) > -FEED_START.at) return undefined;
  if (m[2] !== '' && !parseProductKey(m[2])) return undefined;
  return { at, productKey: m[2] };
}

/** The place before every change at or after `at`. */
export function positionBefore(at: number): FeedPosition {
  return { at, productKey: '' };
}

/**
 * The query string of a request (without `?`): `after` (a cursor), `since` (an RFC 3339 instant),
 * `limit` (1 to 1000), each at most once, `after` and `since` not together; anything else, or a
 * bad value, is refused with the reason.
 */
export function parseFeedQuery(search: string): { query: FeedQuery } | { error: string } {
  const seen = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(search)) {
    if (name !== 'after' && name !== 'since' && name !== 'limit')
      return { error: 'unknown parameter: use after, since or limit' };
    if (seen.has(name)) return { error: `${name} is given more than once` };
    seen.set(name, value);
  }
  const after = seen.get('after');
  const since = seen.get('since');
  const limit = seen.get('limit');
  if (after !== undefined && since !== undefined) return { error: 'after and since cannot be given together' };
  let query: FeedQuery = { limit: MAX_CHANGES_PER_PAGE };
  if (limit !== undefined) {
    const n = /^[1-9]\d{0,3}$/.test(limit) ? Number(limit) : NaN;
    if (!(n <= MAX_CHANGES_PER_PAGE))
      return { error: `limit must be a whole number from 1 to ${MAX_CHANGES_PER_PAGE}` };
    query = { limit: n };
  }
  if (after !== undefined) {
    const position = decodeCursor(after);
    if (!position) return { error: 'after must be a cursor from an earlier answer (its next)' };
    return { query: { ...query, after: position } };
  }
  if (since !== undefined) {
    const instant = parseInstant(since, { cutFraction: true, leapSecond: true });
    if (!instant) return { error: 'since must be an RFC 3339 date-time with an offset, e.g. 2026-03-01T00:00:00Z' };
    return { query: { ...query, since: instant.getTime() } };
  }
  return { query };
}
