import { priceRecord } from '../price-list/price-record.fixture';
import { answerPriceListRequest, tooManyRequests } from './answer-price-list-request';
import { renderPriceList } from './price-list-response';

describe('answerPriceListRequest', () => {
  const list = renderPriceList(
    { records: [priceRecord()], writes: [new Date('2026-02-01T10:00:00Z')] },
    new Date('2026-06-01T00:00:00Z'),
  );

  it('answers GET with the body and every header of section 4', () => {
    const answer = answerPriceListRequest('GET', undefined, list);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(list.body);
    expect(answerPriceListRequest('GET', list.etag, list)).toBe(list.notModified); // precomputed, no allocation
    expect(answer.headers).toEqual({
      etag: list.etag,
      'cache-control': 'public, max-age=300',
      'access-control-allow-origin': '*',
      'last-modified': 'Sun, 01 Feb 2026 10:00:00 GMT',
      'content-type': 'application/json',
      'content-length': list.body.length,
    });
  });

  it('answers HEAD with the headers and no body', () => {
    const answer = answerPriceListRequest('HEAD', undefined, list);
    expect([answer.status, answer.body, answer.headers['content-length']]).toEqual([200, undefined, list.body.length]);
  });

  it('answers a matching If-None-Match with 304, its headers and no body', () => {
    const answer = answerPriceListRequest('GET', list.etag.slice(2), list);
    expect(answer).toEqual({
      status: 304,
      headers: {
        etag: list.etag,
        'cache-control': 'public, max-age=300',
        'access-control-allow-origin': '*',
        'last-modified': 'Sun, 01 Feb 2026 10:00:00 GMT',
      },
    });
  });

  it('leaves Last-Modified out when nothing was ever priced', () => {
    const empty = renderPriceList({ records: [], writes: [] }, new Date('2026-06-01T00:00:00Z'));
    expect(answerPriceListRequest('GET', undefined, empty).headers).not.toHaveProperty('last-modified');
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])('answers %s with 405 and Allow', (method) => {
    const answer = answerPriceListRequest(method, undefined, list);
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
  });

  it('answers 503 with Retry-After: 30 and no-store when no list can be served', () => {
    const answer = answerPriceListRequest('GET', undefined, undefined);
    expect(answer.status).toBe(503);
    expect(answer.headers).toMatchObject({
      'retry-after': '30',
      'cache-control': 'no-store',
      'content-type': 'text/plain; charset=utf-8',
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'Retry-After',
    });
    expect(answer.body?.toString()).toBe('The price list is temporarily unavailable. Retry after 30 seconds.\n');
  });

  it('answers 429 with whole seconds to wait', () => {
    const answer = tooManyRequests(12.2);
    expect(answer.status).toBe(429);
    expect(answer.headers).toMatchObject({
      'retry-after': '13',
      'cache-control': 'no-store',
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'Retry-After',
    });
    expect(tooManyRequests(0).headers['retry-after']).toBe('1');
  });
});

describe('answerPriceListRequest with If-Modified-Since (RFC 9110 13.2.2)', () => {
  // last_changed 10:00:00.700; the change before it 09:00:00 (another second).
  const list = renderPriceList(
    {
      records: [priceRecord({ validFrom: '2026-05-01T09:00:00Z' })],
      writes: [new Date('2026-05-01T10:00:00.700Z')],
    },
    new Date('2026-06-01T00:00:00Z'),
  );
  const answer = (ims: string, inm?: string, method = 'GET'): number =>
    answerPriceListRequest(method, inm, list, ims).status;

  it('304 when last_changed falls before the date plus one second, and nothing else changed in that second', () => {
    expect(list.ok.headers['last-modified']).toBe('Fri, 01 May 2026 10:00:00 GMT');
    expect(answer('Fri, 01 May 2026 10:00:00 GMT')).toBe(304);
    expect(answer('Fri, 01 May 2026 10:00:01 GMT')).toBe(304);
    expect(answer('Fri, 01 May 2026 09:59:59 GMT')).toBe(200);
    expect(answer('Fri, 01 May 2026 10:00:00 GMT', undefined, 'HEAD')).toBe(304);
  });

  it('200 when an earlier change falls in the same second as the date', () => {
    const twice = renderPriceList(
      {
        records: [priceRecord({ validFrom: '2026-05-01T10:00:00.200Z' })],
        writes: [new Date('2026-05-01T10:00:00.700Z')],
      },
      new Date('2026-06-01T00:00:00Z'),
    );
    expect(answerPriceListRequest('GET', undefined, twice, 'Fri, 01 May 2026 10:00:00 GMT').status).toBe(200);
    expect(answerPriceListRequest('GET', undefined, twice, 'Fri, 01 May 2026 10:00:01 GMT').status).toBe(304);
  });

  it('is ignored when If-None-Match is present, or when it is not an HTTP-date', () => {
    expect(answer('Fri, 01 May 2026 10:00:00 GMT', 'W/"other"')).toBe(200);
    expect(answer('Fri, 01 May 2026 09:00:00 GMT', list.etag)).toBe(304);
    expect(answer('2026-05-01T10:00:00Z')).toBe(200);
  });

  it('is ignored when nothing was ever priced (no Last-Modified)', () => {
    const empty = renderPriceList({ records: [], writes: [] }, new Date('2026-06-01T00:00:00Z'));
    expect(answerPriceListRequest('GET', undefined, empty, 'Fri, 01 May 2099 10:00:00 GMT').status).toBe(200);
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
