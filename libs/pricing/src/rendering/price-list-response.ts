import type { OutgoingHttpHeaders } from 'node:http';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { buildPriceList, listChangesAt, nextTransitionAfter, type ListPriceHistory } from '../core/build-price-list';
import { formatHttpDate } from '../core/instant';
import { weakEntityTag } from './entity-tag';

/** The content codings the price list is kept in: the plain body, gzip and brotli. */
export type ContentCoding = 'identity' | 'gzip' | 'br';

export const PRICE_LIST_CACHE_CONTROL = 'public, max-age=300';
export const RETRY_AFTER_UNAVAILABLE_S = 30;

/**
 * Brotli quality for the encoded copy. The default (11) takes 20 s and more on a 20 MB list;
 * measured on 100,000 prices (docs/benchmarks.md), quality 4 takes about half the time of 5 for
 * a body within 1 % of its size (smaller on a regular book), and gzip's default level 6 is as
 * fast again.
 */
export const BROTLI_QUALITY = 4;

/** Every answer of the endpoint lets a page on any origin read it (section 4). */
export const ANY_ORIGIN = { 'access-control-allow-origin': '*' } as const;

/** An HTTP answer: status, headers and body, written as is. */
export interface PlainResponse {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body?: Buffer;
}

/**
 * The price list at one instant as bytes: the costly part of a rebuild (build, serialize, hash,
 * compress), plain data that a worker thread can hand over.
 */
export interface EncodedPriceList {
  /** The body in every coding we keep (`identity` is the JSON itself). */
  readonly bodies: Readonly<Record<ContentCoding, Buffer>>;
  /** Weak, from the JSON bytes: the same for every coding (RFC 9110 8.8.1). */
  readonly etag: string;
  /** `last_changed` (ms), `null` when nothing was ever priced. */
  readonly lastChangedMs: number | null;
  /** The change of the list before `last_changed` (ms), for If-Modified-Since. */
  readonly previousChangeMs: number | null;
  /** The instant the list was built for (ms). */
  readonly builtForMs: number;
  /** The next instant at which the list changes by itself (ms), or Infinity. */
  readonly expiresAtMs: number;
}

/** The answers of `GET /v1/pricing`, computed once per change of the list, never per request. */
export interface PriceListResponse extends EncodedPriceList {
  /** The JSON body (identity coding). */
  readonly body: Buffer;
  /** 200 for GET, per coding. */
  readonly ok: Readonly<Record<ContentCoding, PlainResponse>>;
  /** 200 for HEAD, per coding: the same headers, no body. */
  readonly okWithoutBody: Readonly<Record<ContentCoding, PlainResponse>>;
  readonly notModified: PlainResponse;
}

/** The price list at `instant`, rendered and encoded (see encodePriceList), with its answers. */
export function renderPriceList(history: ListPriceHistory, instant: Date): PriceListResponse {
  return priceListResponse(encodePriceList(history, instant));
}

/** Builds the list at `instant`, serializes it, tags it and compresses it. Pure; no I/O. */
export function encodePriceList(history: ListPriceHistory, instant: Date): EncodedPriceList {
  const body = Buffer.from(JSON.stringify(buildPriceList(history, instant)), 'utf8');
  const changes = listChangesAt(history, instant);
  return {
    bodies: {
      identity: body,
      gzip: gzipSync(body),
      br: brotliCompressSync(body, {
        params: {
          [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
          [zlib.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      }),
    },
    etag: weakEntityTag(body),
    lastChangedMs: changes.latest?.getTime() ?? null,
    previousChangeMs: changes.previous?.getTime() ?? null,
    builtForMs: instant.getTime(),
    expiresAtMs: nextTransitionAfter(history, instant)?.getTime() ?? Infinity,
  };
}

/** The header objects of every answer, around the encoded bodies (cheap: no pass over the bytes). */
export function priceListResponse(encoded: EncodedPriceList): PriceListResponse {
  const lastModified = encoded.lastChangedMs !== null && formatHttpDate(new Date(encoded.lastChangedMs));
  // Every 200 and 304 varies with Accept-Encoding, so that a shared cache keys its copies by it.
  const common: OutgoingHttpHeaders = {
    etag: encoded.etag,
    'cache-control': PRICE_LIST_CACHE_CONTROL,
    ...ANY_ORIGIN,
    vary: 'Accept-Encoding',
    ...(lastModified && { 'last-modified': lastModified }),
  };
  const answers = (coding: ContentCoding): { get: PlainResponse; head: PlainResponse } => {
    const body = encoded.bodies[coding];
    const headers: OutgoingHttpHeaders = {
      ...common,
      'content-type': 'application/json',
      ...(coding !== 'identity' && { 'content-encoding': coding }),
      'content-length': body.length,
    };
    return { get: { status: 200, headers, body }, head: { status: 200, headers } };
  };
  const identity = answers('identity');
  const gzip = answers('gzip');
  const br = answers('br');
  return {
    ...encoded,
    body: encoded.bodies.identity,
    ok: { identity: identity.get, gzip: gzip.get, br: br.get },
    okWithoutBody: { identity: identity.head, gzip: gzip.head, br: br.head },
    notModified: { status: 304, headers: common },
  };
}
