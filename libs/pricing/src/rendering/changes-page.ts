import type { OutgoingHttpHeaders } from 'node:http';
import { PRODUCT_FAMILIES } from '../catalogue/catalogue';
import { formatInstant } from '../core/instant';
import type { FeedPosition, ListChange } from '../core/list-history';
import { entryBytes } from '../core/price-list';
import { inSlices, type Steps } from '../core/slices';
import { ANY_ORIGIN, prepareAnswers, PRICE_LIST_CACHE_CONTROL, type PreparedAnswers } from './price-list-response';

/** Changes a page holds at most, and by default. */
export const MAX_CHANGES_PER_PAGE = 1000;

/** Before every change: the earliest instant a Date holds. */
export const FEED_START: FeedPosition = { at: -8_640_000_000_000_000, productKey: '' };

/** The cursor of a place in the feed (a page's `next`): opaque to clients (http/feed-query.ts reads it). */
export function encodeCursor(position: FeedPosition): string {
  return Buffer.from(`${position.at}~${position.productKey}`, 'utf8').toString('base64url');
}

/** A page that more changes follow never changes (docs/decisions.md, "Prices as they were"). */
export const IMMUTABLE = 'public, max-age=604800, immutable';

/** A page of the change feed: its changes, the cursor just after them, and whether more follow now. */
export interface ChangesPage {
  readonly changes: readonly ListChange[];
  readonly next: string;
  readonly hasMore: boolean;
}

/**
 * The answers of `GET /v1/pricing/changes` for `page`: the JSON document (each entry as the list
 * shows it, serialized once per price: price-list-response.ts; each change with its position and
 * hash in the feed's chain: core/feed-chain.ts), written in slices, hashed and compressed off the
 * event loop; `public, max-age=300`, or immutable when more changes follow (its changes are
 * settled, and so is its `next`).
 */
export async function renderChangesPage(page: ChangesPage, now: number): Promise<PreparedAnswers> {
  const headers: OutgoingHttpHeaders = {
    'cache-control': page.hasMore ? IMMUTABLE : PRICE_LIST_CACHE_CONTROL,
    ...ANY_ORIGIN,
    vary: 'Accept-Encoding',
  };
  return prepareAnswers(await inSlices(bodyOf(page)), headers, {
    lastChangedMs: null,
    previousChangeMs: null,
    builtForMs: now,
  });
}

/** The page's JSON document, in steps: a thousand changes took 20 ms at an instance's start. */
function* bodyOf(page: ChangesPage): Steps<Buffer> {
  const parts: Buffer[] = [Buffer.from('{"currency":"EUR","amounts_exclude_vat":true,"changes":[')];
  for (const [i, change] of page.changes.entries()) {
    if (i > 0) parts.push(COMMA);
    parts.push(
      Buffer.from(
        `{"position":${change.position},"at":"${formatInstant(change.at)}",` +
          `"product_key":${JSON.stringify(change.productKey)},` +
          `"family":"${PRODUCT_FAMILIES[change.family].family}","before":`,
      ),
      change.before ? entryBytes(change.before) : NULL,
      AFTER,
      change.after ? entryBytes(change.after) : NULL,
      Buffer.from(`,"hash":"${change.hash.toString('base64')}"}`),
    );
    if ((i & 63) === 63) yield;
  }
  parts.push(Buffer.from(`],"next":${JSON.stringify(page.next)},"has_more":${page.hasMore}}`));
  return Buffer.concat(parts);
}

const COMMA = Buffer.from(',');
const NULL = Buffer.from('null');
const AFTER = Buffer.from(',"after":');
