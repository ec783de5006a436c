import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { PRODUCT_FAMILIES } from '../catalogue/catalogue';
import { formatHttpDate, formatInstant } from '../core/instant';
import type { ListAt } from '../core/price-list';
import { inSlices, runNow, type Steps } from '../core/slices';
import { weakEntityTag, weakEntityTagOfDigest } from './entity-tag';

/** The content codings the price list is kept in: the plain body, gzip and brotli. */
export type ContentCoding = 'identity' | 'gzip' | 'br';

export const PRICE_LIST_CACHE_CONTROL = 'public, max-age=300';
export const RETRY_AFTER_UNAVAILABLE_S = 30;
/**
 * Brotli quality of the encoded copy: the default (11) takes tens of seconds on a large list;
 * 4 gives a body within a few per cent of 5's in about half the time (docs/benchmarks.md).
 */
export const BROTLI_QUALITY = 4;
/**
 * From this size on (100,000 list prices are about 19 MB), quality 2: a third of quality 4's time
 * for about a fifth more bytes. Each change compresses the whole list again, and quality 4 was most
 * of the time until a one-price change of a list that large was ready (docs/benchmarks.md, "The
 * list's past").
 */
export const LARGE_BODY_BYTES = 8 * 1024 * 1024;
const LARGE_BODY_BROTLI_QUALITY = 2;

/** The brotli quality a body of `bytes` is compressed with. */
export function brotliQualityFor(bytes: number): number {
  return bytes < LARGE_BODY_BYTES ? BROTLI_QUALITY : LARGE_BODY_BROTLI_QUALITY;
}
/** Every answer of the endpoint lets a page on any origin read it (section 4). */
export const ANY_ORIGIN = { 'access-control-allow-origin': '*' } as const;

/** An HTTP answer: status, headers and body, written as is. */
export interface PlainResponse {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body?: Buffer;
}

/** The answers of a resource (JSON unless told), prepared once, never per request: 200 per coding (GET, HEAD) and 304. */
export interface PreparedAnswers {
  /** The body (identity coding). */
  readonly body: Buffer;
  /** Weak, from the body's bytes: the same for every coding (RFC 9110 8.8.1). */
  readonly etag: string;
  /** `Last-Modified` (ms), for If-Modified-Since; `null` when the resource has none. */
  readonly lastChangedMs: number | null;
  /** The change before `lastChangedMs` (ms), for If-Modified-Since. */
  readonly previousChangeMs: number | null;
  /** The instant the answers were prepared for (ms). */
  readonly builtForMs: number;
  /** 200 for GET, per coding. */
  readonly ok: Readonly<Record<ContentCoding, PlainResponse>>;
  /** 200 for HEAD, per coding: the same headers, no body. */
  readonly okWithoutBody: Readonly<Record<ContentCoding, PlainResponse>>;
  readonly notModified: PlainResponse;
}

/** What prepareAnswers is told beside the body: the dates of its conditions, and a media type other than JSON. */
export type AnswerMeta = Pick<PreparedAnswers, 'lastChangedMs' | 'previousChangeMs' | 'builtForMs'> & {
  /** `Content-Type` of every 200 (default `application/json`). */
  readonly contentType?: string;
};

/** The answers of the list at one instant. */
export interface PriceListResponse extends PreparedAnswers {
  /** The next instant at which the list changes by itself (ms), or Infinity. */
  readonly expiresAtMs: number;
  /** The prices listed. */
  readonly priceCount: number;
}

/** Closes a family's prices and the family, or the families and the document. */
const CLOSE = ']}';
const FAMILY_OPENINGS = PRODUCT_FAMILIES.map((family) => `{"family":${JSON.stringify(family.family)},"prices":[`);

/**
 * The document's bytes, exactly `JSON.stringify(priceListDocument(list))`, from each entry's
 * serialized text, in steps (core/slices.ts).
 */
function* bodyOf(list: ListAt): Steps<Buffer> {
  const lastChanged = list.lastChanged === null ? 'null' : `"${formatInstant(list.lastChanged)}"`;
  const parts: string[] = [`{"currency":"EUR","amounts_exclude_vat":true,"last_changed":${lastChanged},"families":[`];
  let family = -1;
  for (let i = 0; i < list.prices.length; i++) {
    if (list.families[i] !== family) {
      if (family >= 0) parts.push(CLOSE, ',');
      family = list.families[i];
      parts.push(FAMILY_OPENINGS[family]);
    } else parts.push(',');
    parts.push(list.entries[i]);
    if ((i & 1023) === 1023) yield;
  }
  if (family >= 0) parts.push(CLOSE);
  parts.push(CLOSE);
  return yield* utf8Of(parts);
}

/**
 * The UTF-8 bytes of `parts` joined, in steps: written into one buffer of a byte per character, as
 * every entry of the list is ASCII (core/record-rules.ts); else, when a part comes out otherwise,
 * encoded again as a whole (a write into a buffer it does not fit in stops early, or writes a byte
 * of a wider character: one or the other shows).
 */
function* utf8Of(parts: readonly string[]): Steps<Buffer> {
  let length = 0;
  // In steps too: 200,000 parts held the loop 6–15 ms at an instance's start, the code not yet optimized.
  for (let i = 0; i < parts.length; i++) {
    length += parts[i].length;
    if ((i & 16383) === 16383) yield;
  }
  const body = Buffer.allocUnsafe(length);
  let offset = 0;
  for (let i = 0; i < parts.length; i++) {
    const written = body.write(parts[i], offset);
    if (written !== parts[i].length) return Buffer.from(parts.join(''));
    offset += written;
    if ((i & 4095) === 4095) yield;
  }
  return isAscii(body) ? body : Buffer.from(parts.join(''));
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * The answers of the list at one instant (`listAt`, core/price-list.ts): found and serialized a
 * slice at a time (core/slices.ts), then hashed and compressed on libuv's thread pool, never on
 * the event loop.
 */
export async function renderPriceList(listAt: Steps<ListAt>): Promise<PriceListResponse> {
  const list = await inSlices(listAt);
  const body = await inSlices(bodyOf(list));
  return { ...(await prepareAnswers(body, listHeaders(list), listMeta(list))), ...listFacts(list) };
}

/**
 * The list's answers at once, on this thread, in the plain coding only (a client that asked for
 * gzip gets the plain body, as HTTP allows): for an instant no prepared list covers.
 */
export function renderPriceListNow(listAt: Steps<ListAt>): PriceListResponse {
  const list = runNow(listAt);
  const body = runNow(bodyOf(list));
  const bodies = { identity: body, gzip: body, br: body };
  return { ...answersOf(weakEntityTag(body), bodies, listHeaders(list), listMeta(list)), ...listFacts(list) };
}

/**
 * The answers of a small `body` never compressed (every coding gets it as it is, as HTTP allows;
 * a few hundred bytes gain nothing), with the headers `common` but for the ETag, computed here.
 */
export function uncompressedAnswers(body: Buffer, common: OutgoingHttpHeaders, meta: AnswerMeta): PreparedAnswers {
  return answersOf(weakEntityTag(body), { identity: body, gzip: body, br: body }, common, meta);
}

/**
 * The answers of a JSON `body` with the headers `common` (but for the ETag, computed here):
 * compressed on libuv's thread pool, hashed meanwhile in steps (sha256Of).
 */
export async function prepareAnswers(
  body: Buffer,
  common: OutgoingHttpHeaders,
  meta: AnswerMeta,
): Promise<PreparedAnswers> {
  const [digest, gzipped, brotli] = await Promise.all([
    inSlices(sha256Of(body)),
    gzipAsync(body),
    brotliAsync(body, {
      params: {
        [zlib.BROTLI_PARAM_QUALITY]: brotliQualityFor(body.length),
        [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
        [zlib.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
  ]);
  const bodies = { identity: body, gzip: gzipped, br: brotli };
  return answersOf(weakEntityTagOfDigest(digest), bodies, common, meta);
}

/** Bytes hashed in one step: about a millisecond's work here. */
const HASHED_PER_STEP = 1024 * 1024;

/**
 * The SHA-256 of `body`, in steps on this thread. Not webcrypto's `digest`: it hashes on the
 * thread pool, but first copies the body on the event loop, which held it 61–75 ms for the 22 MB
 * of 100,000 list prices, four times this whole hash's work (docs/benchmarks.md, "The list's past").
 */
export function* sha256Of(body: Buffer): Steps<Buffer> {
  const hash = createHash('sha256');
  for (let offset = 0; offset < body.length; offset += HASHED_PER_STEP) {
    hash.update(body.subarray(offset, offset + HASHED_PER_STEP));
    yield;
  }
  return hash.digest();
}

/** The list's headers but the ETag: every 200 and 304 varies with Accept-Encoding, so that a shared cache keys its copies by it. */
function listHeaders(list: ListAt): OutgoingHttpHeaders {
  const lastModified = list.lastChanged !== null && formatHttpDate(new Date(list.lastChanged));
  return {
    'cache-control': PRICE_LIST_CACHE_CONTROL,
    ...ANY_ORIGIN,
    vary: 'Accept-Encoding',
    ...(lastModified && { 'last-modified': lastModified }),
  };
}

function listMeta(list: ListAt): Pick<PreparedAnswers, 'lastChangedMs' | 'previousChangeMs' | 'builtForMs'> {
  return { lastChangedMs: list.lastChanged, previousChangeMs: list.previousChange, builtForMs: list.at };
}

function listFacts(list: ListAt): Pick<PriceListResponse, 'expiresAtMs' | 'priceCount'> {
  return { expiresAtMs: list.nextChange, priceCount: list.prices.length };
}

/** The header objects of every answer, around the bodies (no pass over the bytes). */
function answersOf(
  etag: string,
  bodies: Readonly<Record<ContentCoding, Buffer>>,
  headers: OutgoingHttpHeaders,
  meta: AnswerMeta,
): PreparedAnswers {
  const common: OutgoingHttpHeaders = { etag, ...headers };
  const ok = {} as Record<ContentCoding, PlainResponse>;
  const okWithoutBody = {} as Record<ContentCoding, PlainResponse>;
  for (const coding of ['identity', 'gzip', 'br'] as const) {
    const body = bodies[coding];
    const encoded = body !== bodies.identity;
    const codingHeaders: OutgoingHttpHeaders = {
      ...common,
      'content-type': meta.contentType ?? 'application/json',
      ...(encoded && { 'content-encoding': coding }),
      'content-length': body.length,
    };
    ok[coding] = { status: 200, headers: codingHeaders, body };
    okWithoutBody[coding] = { status: 200, headers: codingHeaders };
  }
  const { lastChangedMs, previousChangeMs, builtForMs } = meta;
  return {
    body: bodies.identity,
    etag,
    lastChangedMs,
    previousChangeMs,
    builtForMs,
    ok,
    okWithoutBody,
    notModified: { status: 304, headers: common },
  };
}
