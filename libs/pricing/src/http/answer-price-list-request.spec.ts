import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { priceRecord } from '../core/price-record.fixture';
import { answerPriceListRequest, tooManyRequests, type PriceListRequestHeaders } from './answer-price-list-request';
import { historyOf } from '../core/list-history.fixture';
import { priceListDocument } from '../core/price-list';
import type { PriceRecord } from '../core/price-record';
import { runNow } from '../core/slices';
import { renderPriceList, renderPriceListNow, type PriceListResponse } from '../rendering/price-list-response';
import { weakEntityTag } from '../rendering/entity-tag';

interface History {
  readonly records: readonly PriceRecord[];
  readonly writes: readonly number[];
}

/** The answers of the list of `history` at `instant`, as PricingSnapshot prepares them. */
function render(history: History, instant: Date): Promise<PriceListResponse> {
  const t = instant.getTime();
  return renderPriceList(historyOf(history.records, history.writes).listAt(t));
}

describe('answerPriceListRequest', () => {
  let list: PriceListResponse;
  let headers: Record<string, string>;
  beforeAll(async () => {
    list = await render(
      { records: [priceRecord()], writes: [Date.parse('2026-02-01T10:00:00Z')] },
      new Date('2026-06-01T00:00:00Z'),
    );
    headers = {
      etag: list.etag,
      'cache-control': 'public, max-age=300',
      'access-control-allow-origin': '*',
      vary: 'Accept-Encoding',
      'last-modified': 'Sun, 01 Feb 2026 10:00:00 GMT',
    };
  });

  it('answers GET with the plain body and every header of section 4, Vary: Accept-Encoding among them', () => {
    const answer = answerPriceListRequest('GET', {}, list);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(list.body);
    expect(answerPriceListRequest('GET', { 'if-none-match': list.etag }, list)).toBe(list.notModified); // precomputed
    expect(answer.headers).toEqual({
      ...headers,
      'content-type': 'application/json',
      'content-length': list.body.length,
    });
  });

  it.each([
    ['br', 'gzip, deflate, br', brotliDecompressSync],
    ['gzip', 'gzip', gunzipSync],
  ] as const)(
    'answers GET in %s, as Accept-Encoding prefers: its own length, the same tag',
    (coding, accept, decode) => {
      const answer = answerPriceListRequest('GET', { 'accept-encoding': accept }, list);
      expect(answer.status).toBe(200);
      expect(decode(answer.body!).equals(list.body)).toBe(true);
      expect(answer.headers).toEqual({
        ...headers,
        'content-type': 'application/json',
        'content-encoding': coding,
        'content-length': answer.body!.length,
      });
    },
  );

  it.each(['identity', 'gzip', 'br'] as const)('answers HEAD with the headers of GET in %s and no body', (coding) => {
    const accept = { 'accept-encoding': coding };
    const answer = answerPriceListRequest('HEAD', accept, list);
    expect([answer.status, answer.body]).toEqual([200, undefined]);
    expect(answer.headers).toEqual(answerPriceListRequest('GET', accept, list).headers);
    expect(answer.headers['content-length']).toBe(list.ok[coding].body!.length);
  });

  it('answers a matching If-None-Match with 304, its headers with Vary and no body, whatever the coding', () => {
    for (const accept of [undefined, 'gzip', 'br']) {
      const answer = answerPriceListRequest(
        'GET',
        { 'if-none-match': list.etag.slice(2), 'accept-encoding': accept },
        list,
      );
      expect(answer).toEqual({ status: 304, headers });
    }
  });

  it('leaves Last-Modified out when nothing was ever priced', async () => {
    const empty = await render({ records: [], writes: [] }, new Date('2026-06-01T00:00:00Z'));
    expect(answerPriceListRequest('GET', {}, empty).headers).not.toHaveProperty('last-modified');
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])('answers %s with 405 and Allow', (method) => {
    const answer = answerPriceListRequest(method, {}, list);
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
  });

  /** What a 503 and a 429 share: not stored, readable across origins with their Retry-After. */
  const RETRY_LATER = {
    'cache-control': 'no-store',
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'Retry-After',
  };

  it('answers 503 with Retry-After: 30 and no-store when no list can be served', () => {
    const answer = answerPriceListRequest('GET', {}, undefined);
    expect(answer.status).toBe(503);
    expect(answer.headers).toMatchObject({
      ...RETRY_LATER,
      'retry-after': '30',
      'content-type': 'text/plain; charset=utf-8',
    });
    expect(answer.body?.toString()).toBe('The price list is temporarily unavailable. Retry after 30 seconds.\n');
  });

  it('answers 429 with whole seconds to wait', () => {
    const answer = tooManyRequests(12.2);
    expect(answer.status).toBe(429);
    expect(answer.headers).toMatchObject({ ...RETRY_LATER, 'retry-after': '13' });
    expect(tooManyRequests(0).headers['retry-after']).toBe('1');
  });
});

describe('answerPriceListRequest with If-Modified-Since (RFC 9110 13.2.2)', () => {
  // last_changed 10:00:00.700; the change before it 09:00:00 (another second).
  let list: PriceListResponse;
  beforeAll(async () => {
    list = await render(
      {
        records: [priceRecord({ validFrom: '2026-05-01T09:00:00Z' })],
        writes: [Date.parse('2026-05-01T10:00:00.700Z')],
      },
      new Date('2026-06-01T00:00:00Z'),
    );
  });
  const answer = (ims: string, inm?: string, method = 'GET'): number =>
    answerPriceListRequest(method, { 'if-none-match': inm, 'if-modified-since': ims }, list).status;
  const since = (ims: string, priceList: typeof list): number =>
    answerPriceListRequest('GET', { 'if-modified-since': ims }, priceList).status;

  it('304 when last_changed falls before the date plus one second, and nothing else changed in that second', () => {
    expect(list.ok.identity.headers['last-modified']).toBe('Fri, 01 May 2026 10:00:00 GMT');
    expect(answer('Fri, 01 May 2026 10:00:00 GMT')).toBe(304);
    expect(answer('Fri, 01 May 2026 10:00:01 GMT')).toBe(304);
    expect(answer('Fri, 01 May 2026 09:59:59 GMT')).toBe(200);
    expect(answer('Fri, 01 May 2026 10:00:00 GMT', undefined, 'HEAD')).toBe(304);
  });

  it('200 when an earlier change falls in the same second as the date', async () => {
    const twice = await render(
      {
        records: [priceRecord({ validFrom: '2026-05-01T10:00:00.200Z' })],
        writes: [Date.parse('2026-05-01T10:00:00.700Z')],
      },
      new Date('2026-06-01T00:00:00Z'),
    );
    expect(since('Fri, 01 May 2026 10:00:00 GMT', twice)).toBe(200);
    expect(since('Fri, 01 May 2026 10:00:01 GMT', twice)).toBe(304);
  });

  it('is ignored when If-None-Match is present, or when it is not an HTTP-date', () => {
    expect(answer('Fri, 01 May 2026 10:00:00 GMT', 'W/"other"')).toBe(200);
    expect(answer('Fri, 01 May 2026 09:00:00 GMT', list.etag)).toBe(304);
    expect(answer('2026-05-01T10:00:00Z')).toBe(200);
  });

  it('is ignored when nothing was ever priced (no Last-Modified)', async () => {
    const empty = await render({ records: [], writes: [] }, new Date('2026-06-01T00:00:00Z'));
    expect(since('Fri, 01 May 2099 10:00:00 GMT', empty)).toBe(200);
  });
});

describe('answerPriceListRequest with If-Match and If-Unmodified-Since (RFC 9110 13.2.2)', () => {
  // last_changed 10:00:00.700 (Last-Modified: 10:00:00).
  let list: PriceListResponse;
  beforeAll(async () => {
    list = await render(
      {
        records: [priceRecord({ validFrom: '2026-05-01T09:00:00Z' })],
        writes: [Date.parse('2026-05-01T10:00:00.700Z')],
      },
      new Date('2026-06-01T00:00:00Z'),
    );
  });
  const status = (headers: PriceListRequestHeaders, method = 'GET'): number =>
    answerPriceListRequest(method, headers, list).status;
  const LAST_MODIFIED = 'Fri, 01 May 2026 10:00:00 GMT';

  it('412 for If-Match with any list of tags: strong comparison, and our tag is weak', () => {
    for (const ifMatch of [
      list.etag,
      list.etag.slice(2),
      `"other", ${list.etag.slice(2)}`,
      'W/"other"',
      'garbage',
      '',
    ]) {
      expect([ifMatch, status({ 'if-match': ifMatch })]).toEqual([ifMatch, 412]);
      expect([ifMatch, status({ 'if-match': ifMatch }, 'HEAD')]).toEqual([ifMatch, 412]);
    }
  });

  it('If-Match: * passes, as the list exists: then If-None-Match and the coding decide', () => {
    expect(status({ 'if-match': '*' })).toBe(200);
    expect(status({ 'if-match': ' * ' }, 'HEAD')).toBe(200);
    expect(status({ 'if-match': '*', 'if-none-match': list.etag })).toBe(304);
    expect(answerPriceListRequest('GET', { 'if-match': '*', 'accept-encoding': 'br' }, list)).toBe(list.ok.br);
  });

  it('the 412: plain text, never stored, readable from any origin, no validators', () => {
    const answer = answerPriceListRequest('GET', { 'if-match': list.etag }, list);
    expect(answer.headers).toEqual({
      'access-control-allow-origin': '*',
      'cache-control': 'no-store',
      'content-type': 'text/plain; charset=utf-8',
      'content-length': answer.body!.length,
    });
    expect(answer.body!.toString()).toMatch(/^Precondition Failed: If-Match /);
    const unmodified = answerPriceListRequest('GET', { 'if-unmodified-since': 'Fri, 01 May 2026 09:59:59 GMT' }, list);
    expect(unmodified.headers).toEqual({ ...answer.headers, 'content-length': unmodified.body!.length });
    expect(unmodified.body!.toString()).toMatch(/^Precondition Failed: .*If-Unmodified-Since/);
  });

  it('If-Unmodified-Since: 412 once last_changed reaches the date plus one second; the Last-Modified sent back passes', () => {
    expect(list.ok.identity.headers['last-modified']).toBe(LAST_MODIFIED);
    expect(status({ 'if-unmodified-since': LAST_MODIFIED })).toBe(200);
    expect(status({ 'if-unmodified-since': 'Fri, 01 May 2026 10:00:01 GMT' })).toBe(200);
    expect(status({ 'if-unmodified-since': 'Friday, 01-May-26 10:00:00 GMT' })).toBe(200);
    expect(status({ 'if-unmodified-since': 'Fri, 01 May 2026 09:59:59 GMT' })).toBe(412);
    expect(status({ 'if-unmodified-since': 'Fri May  1 09:59:59 2026' }, 'HEAD')).toBe(412);
  });

  it('If-Unmodified-Since is ignored with If-Match, when not one valid HTTP-date, and without Last-Modified', async () => {
    expect(status({ 'if-match': '*', 'if-unmodified-since': 'Fri, 01 May 2026 09:59:59 GMT' })).toBe(200);
    expect(status({ 'if-unmodified-since': '2026-05-01T09:00:00Z' })).toBe(200);
    expect(status({ 'if-unmodified-since': 'Fri, 01 May 2026 09:59:59 GMT, Fri, 01 May 2026 09:59:59 GMT' })).toBe(200);
    const empty = await render({ records: [], writes: [] }, new Date('2026-06-01T00:00:00Z'));
    expect(
      answerPriceListRequest('GET', { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' }, empty).status,
    ).toBe(200);
    expect(answerPriceListRequest('GET', { 'if-match': '*' }, empty).status).toBe(200);
  });

  it('comes before If-None-Match and If-Modified-Since, which would have answered 304', () => {
    expect(status({ 'if-match': list.etag, 'if-none-match': list.etag })).toBe(412);
    expect(status({ 'if-unmodified-since': 'Fri, 01 May 2026 09:59:59 GMT', 'if-modified-since': LAST_MODIFIED })).toBe(
      412,
    );
  });

  it('is not evaluated where the answer would be 405 or 503', () => {
    expect(answerPriceListRequest('POST', { 'if-match': list.etag }, list).status).toBe(405);
    expect(answerPriceListRequest('GET', { 'if-match': list.etag }, undefined).status).toBe(503);
  });
});

describe('renderPriceList', () => {
  it('expires at the next scheduled instant', async () => {
    const records = [priceRecord({ validUntil: '2026-07-01T00:00:00Z' })];
    const list = await render({ records, writes: [] }, new Date('2026-06-01T00:00:00Z'));
    expect(list.expiresAtMs).toBe(Date.parse('2026-07-01T00:00:00Z'));
    expect((await render({ records: [], writes: [] }, new Date())).expiresAtMs).toBe(Infinity);
  });

  it('keeps the JSON of the document and its gzip and brotli encodings, tagged from the JSON alone', async () => {
    const history = { records: [priceRecord(), priceRecord({ productKey: 'storage.io1' })], writes: [] };
    const t = Date.parse('2026-06-01T00:00:00Z');
    const found = historyOf(history.records, history.writes).listAt(t);
    const list = await renderPriceList(found);
    const json = JSON.stringify(priceListDocument(runNow(historyOf(history.records, []).listAt(t))));
    expect(list.body.toString()).toBe(json);
    expect(gunzipSync(list.ok.gzip.body!).equals(list.body)).toBe(true);
    expect(brotliDecompressSync(list.ok.br.body!).equals(list.body)).toBe(true);
    expect(list.etag).toBe(weakEntityTag(list.body));
  });

  it('renderPriceListNow: the same list, tag and headers at once, in the plain coding only', async () => {
    const history = { records: [priceRecord(), priceRecord({ productKey: 'storage.io1' })], writes: [] };
    const t = Date.parse('2026-06-01T00:00:00Z');
    const prepared = await render(history, new Date(t));
    const now = renderPriceListNow(historyOf(history.records, history.writes).listAt(t));
    expect([now.body, now.etag, now.lastChangedMs, now.expiresAtMs]).toEqual([
      prepared.body,
      prepared.etag,
      prepared.lastChangedMs,
      prepared.expiresAtMs,
    ]);
    expect(now.ok.identity).toEqual(prepared.ok.identity);
    expect(now.ok.gzip).toEqual(prepared.ok.identity);
    expect(now.notModified).toEqual(prepared.notModified);
  });

  it('serializes a list of thousands of prices in families exactly as JSON.stringify', async () => {
    const records = Array.from({ length: 3000 }, (_, i) =>
      priceRecord({ productKey: `compute.g${i % 7}.${i}`, unitType: 'seconds', unitCount: 3600, amount: `0.${i}` }),
    ).concat([priceRecord(), priceRecord({ productKey: 'network.vpc_egress', unitType: 'gb', unitCount: 1 })]);
    const t = Date.parse('2026-06-01T00:00:00Z');
    const list = await render({ records, writes: [] }, new Date(t));
    const document = priceListDocument(runNow(historyOf(records, []).listAt(t)));
    expect(list.body.toString()).toBe(JSON.stringify(document));
    expect(list.priceCount).toBe(3002);
  });
});
