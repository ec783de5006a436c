import type { OutgoingHttpHeaders } from 'node:http';
import {
  buildPriceList,
  listChangesAt,
  nextTransitionAfter,
  type ListPriceHistory,
} from '../price-list/build-price-list';
import { formatHttpDate } from '../price-list/instant';
import { weakEntityTag } from './entity-tag';

export const PRICE_LIST_CACHE_CONTROL = 'public, max-age=300';
export const RETRY_AFTER_UNAVAILABLE_S = 30;

/** An HTTP answer: status, headers and body, written as is. */
export interface PlainResponse {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body?: Buffer;
}

/** The answers of `GET /v1/pricing`, computed once per change of the list, never per request. */
export interface PriceListResponse {
  readonly body: Buffer;
  readonly etag: string;
  readonly ok: PlainResponse;
  readonly okWithoutBody: PlainResponse;
  readonly notModified: PlainResponse;
  /** `last_changed` (ms), `null` when nothing was ever priced. */
  readonly lastChangedMs: number | null;
  /** The change of the list before `last_changed` (ms), for If-Modified-Since. */
  readonly previousChangeMs: number | null;
  /** The instant the list was built for (ms). */
  readonly builtForMs: number;
  /** The next instant at which the list changes by itself (ms), or Infinity. */
  readonly expiresAtMs: number;
}

export function renderPriceList(history: ListPriceHistory, instant: Date): PriceListResponse {
  const document = buildPriceList(history, instant);
  const body = Buffer.from(JSON.stringify(document), 'utf8');
  const etag = weakEntityTag(body);
  const changes = listChangesAt(history, instant);
  const lastModified = changes.latest && formatHttpDate(changes.latest);
  const common: OutgoingHttpHeaders = {
    etag,
    'cache-control': PRICE_LIST_CACHE_CONTROL,
    'access-control-allow-origin': '*',
    ...(lastModified !== null && { 'last-modified': lastModified }),
  };
  const headers200 = { ...common, 'content-type': 'application/json', 'content-length': body.length };
  return {
    body,
    etag,
    ok: { status: 200, headers: headers200, body },
    okWithoutBody: { status: 200, headers: headers200 },
    notModified: { status: 304, headers: common },
    lastChangedMs: changes.latest?.getTime() ?? null,
    previousChangeMs: changes.previous?.getTime() ?? null,
    builtForMs: instant.getTime(),
    expiresAtMs: nextTransitionAfter(history, instant)?.getTime() ?? Infinity,
  };
}
