import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { priceRecord } from '../price-list/price-record.fixture';
import { answerPriceListRequest, tooManyRequests } from './answer-price-list-request';
import { encodePriceList, priceListResponse, renderPriceList } from './price-list-response';

describe('answerPriceListRequest', () => {
  const list = renderPriceList(
    { records: [priceRecord()], writes: [new Date('2026-02-01T10:00:00Z')] },
    new Date('2026-06-01T00:00:00Z'),
  );

  const headers = {
    etag: list.etag,
    'cache-control': 'public, max-age=300',
    'access-control-allow-origin': '*',
    vary: 'Accept-Encoding',
    'last-modified': 'Sun, 01 Feb 2026 10:00:00 GMT',
  };

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
    expect(answer.headers['content-length']).toBe(list.bodies[coding].length);
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

  it('leaves Last-Modified out when nothing was ever priced', () => {
    const empty = renderPriceList({ records: [], writes: [] }, new Date('2026-06-01T00:00:00Z'));
    expect(answerPriceListRequest('GET', {}, empty).headers).not.toHaveProperty('last-modified');
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])('answers %s with 405 and Allow', (method) => {
    const answer = answerPriceListRequest(method, {}, list);
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
  });

  it('answers 503 with Retry-After: 30 and no-store when no list can be served', () => {
    const answer = answerPriceListRequest('GET', {}, undefined);
    expect(answer.status).toBe(503);
    expect(answer.headers).toMatchObject({
      'retry-after': '30',
      'cache-control': 'no-store',
      'content-type': 'text/plain; charset=utf-8',
    });
    expect(answer.body?.toString()).toBe('The price list is temporarily unavailable. Retry after 30 seconds.\n');
  });

  it('answers 429 with whole seconds to wait', () => {
    const answer = tooManyRequests(12.2);
    expect(answer.status).toBe(429);
    expect(answer.headers).toMatchObject({ 'retry-after': '13', 'cache-control': 'no-store' });
    expect(tooManyRequests(0).headers['retry-after']).toBe('1');
  });
});

describe('renderPriceList', () => {
  it('expires at the next scheduled instant', () => {
    const records = [priceRecord({ validUntil: '2026-07-01T00:00:00Z' })];
    const list = renderPriceList({ records, writes: [] }, new Date('2026-06-01T00:00:00Z'));
    expect(list.expiresAtMs).toBe(Date.parse('2026-07-01T00:00:00Z'));
    expect(renderPriceList({ records: [], writes: [] }, new Date()).expiresAtMs).toBe(Infinity);
  });
});

describe('encodePriceList', () => {
  it('keeps the JSON and its gzip and brotli encodings, tagged from the JSON alone', () => {
    const history = { records: [priceRecord(), priceRecord({ productKey: 'storage.io1' })], writes: [] };
    const encoded = encodePriceList(history, new Date('2026-06-01T00:00:00Z'));
    expect(gunzipSync(encoded.bodies.gzip).equals(encoded.bodies.identity)).toBe(true);
    expect(brotliDecompressSync(encoded.bodies.br).equals(encoded.bodies.identity)).toBe(true);
    expect(encoded.etag).toBe(renderPriceList(history, new Date('2026-06-01T00:00:00Z')).etag);
    expect(priceListResponse(encoded)).toEqual(renderPriceList(history, new Date('2026-06-01T00:00:00Z')));
  });
});
