import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { parseHttpDate } from '../core/instant';
import { negotiateContentCoding } from './accept-encoding';
import { ifMatchMatches, ifNoneMatchMatches } from '../rendering/entity-tag';
import {
  ANY_ORIGIN,
  RETRY_AFTER_UNAVAILABLE_S,
  type PlainResponse,
  type PreparedAnswers,
} from '../rendering/price-list-response';

/**
 * 429 and 503 tell when to retry; Retry-After is not a CORS-safelisted header, so it is exposed
 * for a page on another origin to honour it (the ETag stays unexposed, as section 4 says).
 */
const RETRY_AFTER_EXPOSED = { 'access-control-expose-headers': 'Retry-After' } as const;

function plainText(status: number, text: string, headers: OutgoingHttpHeaders): PlainResponse {
  const body = Buffer.from(`${text}\n`, 'utf8');
  return {
    status,
    headers: { ...ANY_ORIGIN, ...headers, 'content-type': 'text/plain; charset=utf-8', 'content-length': body.length },
    body,
  };
}

/** A request this resource refuses (400, 404): plain text, never stored. */
export function refusal(status: 400 | 404, text: string): PlainResponse {
  return plainText(status, text, { 'cache-control': 'no-store' });
}

/** `answer` with another Cache-Control (the same headers otherwise). */
export function withCacheControl(answer: PlainResponse, cacheControl: string): PlainResponse {
  return { ...answer, headers: { ...answer.headers, 'cache-control': cacheControl } };
}

/** GET and HEAD only; OPTIONS too gets 405, as the endpoint supports no CORS preflight. */
export const METHOD_NOT_ALLOWED = plainText(405, 'Method Not Allowed: use GET or HEAD.', { allow: 'GET, HEAD' });

/** Section 7: 503 with `Retry-After: 30` and a plain-text body. */
export const PRICE_LIST_UNAVAILABLE = plainText(
  503,
  `The price list is temporarily unavailable. Retry after ${RETRY_AFTER_UNAVAILABLE_S} seconds.`,
  { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_S), 'cache-control': 'no-store', ...RETRY_AFTER_EXPOSED },
);

/** Section 7: 429 per client address, with `Retry-After` in seconds. */
export function tooManyRequests(retryAfterS: number): PlainResponse {
  const seconds = Math.max(1, Math.ceil(retryAfterS));
  return plainText(429, `Too many requests from this address. Retry after ${seconds} seconds.`, {
    'retry-after': String(seconds),
    'cache-control': 'no-store',
    ...RETRY_AFTER_EXPOSED,
  });
}

/**
 * RFC 9110 15.5.13: a precondition of the request (If-Match, If-Unmodified-Since) is false. Plain
 * text, never stored (the same request may pass a moment later), readable from any origin;
 * no validators (docs/decisions.md, "ETag and conditional requests").
 */
export const IF_MATCH_FAILED = plainText(
  412,
  'Precondition Failed: If-Match names no current representation of this resource (its ETag is weak, so only * matches).',
  { 'cache-control': 'no-store' },
);
export const IF_UNMODIFIED_SINCE_FAILED = plainText(
  412,
  'Precondition Failed: this resource was modified after the If-Unmodified-Since date.',
  { 'cache-control': 'no-store' },
);

/** The request headers the answer depends on. */
export type PriceListRequestHeaders = Pick<
  IncomingHttpHeaders,
  'if-match' | 'if-unmodified-since' | 'if-none-match' | 'if-modified-since' | 'accept-encoding'
>;

/**
 * The answer to a request of `/v1/pricing` (and of the list at an instant and the change feed),
 * from precomputed bytes and headers: 200 with the list in the coding `Accept-Encoding` prefers,
 * 412 when If-Match or If-Unmodified-Since is false, 304 when the conditional headers say the
 * client's copy is current, 405 for other methods, 503 when no list can be served. Preconditions
 * are evaluated only for what would otherwise be a 2xx or 304 (RFC 9110 13.1: never on a 405 or 503).
 */
export function answerPriceListRequest(
  method: string,
  headers: PriceListRequestHeaders,
  priceList: PreparedAnswers | undefined,
): PlainResponse {
  const head = method === 'HEAD';
  if (method !== 'GET' && !head) return METHOD_NOT_ALLOWED;
  if (!priceList) return PRICE_LIST_UNAVAILABLE;
  const ifMatch = headers['if-match'];
  const ifUnmodifiedSince = headers['if-unmodified-since'];
  if (ifMatch !== undefined || ifUnmodifiedSince !== undefined) {
    const failed = failedPrecondition(priceList, ifMatch, ifUnmodifiedSince);
    if (failed) return failed;
  }
  if (isNotModified(priceList, headers['if-none-match'], headers['if-modified-since'])) return priceList.notModified;
  const coding = negotiateContentCoding(headers['accept-encoding']);
  return head ? priceList.okWithoutBody[coding] : priceList.ok[coding];
}

/**
 * RFC 9110 13.2.2, for GET and HEAD: If-None-Match when present (weak comparison), else
 * If-Modified-Since when it is a valid HTTP-date.
 */
function isNotModified(
  priceList: PreparedAnswers,
  ifNoneMatch: string | undefined,
  ifModifiedSince: string | undefined,
): boolean {
  // A client revalidating sends back the tag it got: compared before any parsing.
  if (ifNoneMatch !== undefined)
    return ifNoneMatch === priceList.etag || ifNoneMatchMatches(ifNoneMatch, priceList.etag);
  return ifModifiedSince !== undefined && unmodifiedSince(priceList, ifModifiedSince);
}

/**
 * Whether the list is certainly unchanged since the HTTP date D: an HTTP date has whole seconds,
 * so `last_changed` L must fall before D + 1 s, and no earlier change may fall in D's second
 * (a client that fetched between two changes within one second must not keep the older list).
 * An invalid date is ignored (RFC 9110 13.1.3).
 */
function unmodifiedSince(priceList: PreparedAnswers, ifModifiedSince: string): boolean {
  const since = parseHttpDate(ifModifiedSince, new Date(priceList.builtForMs));
  const last = priceList.lastChangedMs;
  if (since === undefined || last === null) return false;
  const previous = priceList.previousChangeMs;
  return last < since + 1000 && (previous === null || previous < since);
}

/**
 * RFC 9110 13.2.2, steps 1 and 2: If-Match when present (strong comparison: our weak tag never
 * matches, `*` does, as a representation exists), else If-Unmodified-Since when it is one valid
 * HTTP-date and the resource has a Last-Modified. The 412 to send, or `undefined`.
 */
function failedPrecondition(
  priceList: PreparedAnswers,
  ifMatch: string | undefined,
  ifUnmodifiedSince: string | undefined,
): PlainResponse | undefined {
  if (ifMatch !== undefined) return ifMatchMatches(ifMatch, priceList.etag) ? undefined : IF_MATCH_FAILED;
  if (ifUnmodifiedSince === undefined || priceList.lastChangedMs === null) return undefined;
  const since = parseHttpDate(ifUnmodifiedSince, new Date(priceList.builtForMs));
  // Last-Modified has whole seconds: the resource is unmodified since D when the Last-Modified it
  // sends (last_changed cut to its second) is at or before D, so a client that sends back the
  // Last-Modified it got passes; it is modified since D once last_changed reaches D + 1 s.
  return since === undefined || priceList.lastChangedMs < since + 1000 ? undefined : IF_UNMODIFIED_SINCE_FAILED;
}
