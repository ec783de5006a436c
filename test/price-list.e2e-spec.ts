import { Clock } from '@app/clock';
import { PricingService } from '@app/pricing';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { spawnCli } from './support/cli';
import { applyBook, useTestDatabase, withdrawScheduledListPrice, type TestDatabase } from './support/database';
import { send, waitFor, type RawResponse } from './support/http';
import type { TestApp } from './support/test-app';
import { listPrice, ManualClock } from '@app/pricing/testing';

// GET /v1/pricing end to end: the real app in-process on a real PostgreSQL.
// docs/price-list-api.md is the contract; docs/decisions.md ("The public endpoint") what it leaves open.

const PATH = '/v1/pricing';
const price = listPrice;
const CACHE_CONTROL = 'public, max-age=300';
/** Headers a server or Node adds to every response on the connection, not the endpoint's own. */
const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
const WEAK_ETAG = /^W\/"[\x21\x23-\x7e]+"$/;

/** The instant the known book is looked at (fake clock); every write happens before it (real time). */
const T = '2030-06-01T12:00:00Z';

/**
 * A small price book, deliberately out of order. At T: a scheduled change of compute.g2.4 took
 * effect, compute.g2.8 and network.nat_gateway ended, observability.api_request has not started,
 * organization prices exist (one on a family without any list price, one starting after every
 * list instant, so that it would move last_changed if it counted).
 */
const KNOWN_BOOK = {
  products: [{ product_key: 'storage.io1', on_sale: false }],
  prices: [
    price('observability.ingested_sample', 'samples', 1, '0.000000012', '2025-01-01T00:00:00Z'),
    price('compute.g2.16', 'seconds', 3600, '0.9600', '2025-01-01T00:00:00Z'),
    price('storage.gp1', 'gib_hours', 730, '0.0480', '2025-01-01T01:00:00+01:00'),
    price('compute.g2.4', 'seconds', 3600, '0.2400', '2025-01-01T00:00:00Z'),
    price('compute.g2.4', 'seconds', 3600, '0.2600', '2030-01-01T00:00:00Z'),
    price('compute.g2.2', 'seconds', 3600, '0.1200', '2025-01-01T00:00:00Z'),
    price('network.floating_ip', 'seconds', 3600, '0.0050', '2030-03-01T08:30:00Z', '2031-01-01T00:00:00Z'),
    price('storage.io1', 'gib_hours', 730, '0.1250', '2025-06-15T10:20:30.250Z'),
    price('network.nat_gateway', 'seconds', 3600, '0.0100', '2025-01-01T00:00:00Z', '2029-06-01T00:00:00Z'),
    price('observability.api_request', 'requests', 1000, '0.0010', '2031-01-01T00:00:00Z'),
    price('compute.g2.8', 'seconds', 3600, '0.4800', '2025-01-01T00:00:00Z', '2029-01-01T00:00:00Z'),
    price('network.vpc_egress', 'gb', 1, '0.01', '2025-01-01T00:00:00Z'),
    { ...price('storage.gp1', 'gib_hours', 730, '0.0400', '2030-05-01T00:00:00Z'), organization_id: 'org_42' },
    { ...price('network.vpc_ingress', 'gb', 1, '0.005', '2025-01-01T00:00:00Z'), organization_id: 'org_42' },
    price('storage.snapshot', 'gib_hours', 730, '0.0300', '2025-01-01T00:00:00Z'),
  ],
};

/** The document at T, written by hand: key order, family order, natural order, digits as set. */
const EXPECTED_AT_T =
  '{"currency":"EUR","amounts_exclude_vat":true,"last_changed":"2030-03-01T08:30:00Z","families":[' +
  '{"family":"compute_instance","prices":[' +
  '{"product_key":"compute.g2.2","dimensions":{"instance_type":"g2.2"},"unit_type":"seconds","unit_count":3600,"amount":"0.1200","valid_from":"2025-01-01T00:00:00Z","valid_until":null},' +
  '{"product_key":"compute.g2.4","dimensions":{"instance_type":"g2.4"},"unit_type":"seconds","unit_count":3600,"amount":"0.2600","valid_from":"2030-01-01T00:00:00Z","valid_until":null},' +
  '{"product_key":"compute.g2.16","dimensions":{"instance_type":"g2.16"},"unit_type":"seconds","unit_count":3600,"amount":"0.9600","valid_from":"2025-01-01T00:00:00Z","valid_until":null}]},' +
  '{"family":"network_floating_ip","prices":[' +
  '{"product_key":"network.floating_ip","unit_type":"seconds","unit_count":3600,"amount":"0.0050","valid_from":"2030-03-01T08:30:00Z","valid_until":"2031-01-01T00:00:00Z"}]},' +
  '{"family":"network_vpc_egress","prices":[' +
  '{"product_key":"network.vpc_egress","unit_type":"gb","unit_count":1,"amount":"0.01","valid_from":"2025-01-01T00:00:00Z","valid_until":null}]},' +
  '{"family":"storage_volume","prices":[' +
  '{"product_key":"storage.gp1","dimensions":{"storage_class":"gp1"},"unit_type":"gib_hours","unit_count":730,"amount":"0.0480","valid_from":"2025-01-01T00:00:00Z","valid_until":null},' +
  '{"product_key":"storage.io1","dimensions":{"storage_class":"io1"},"unit_type":"gib_hours","unit_count":730,"amount":"0.1250","valid_from":"2025-06-15T10:20:30.250Z","valid_until":null}]},' +
  '{"family":"storage_snapshot","prices":[' +
  '{"product_key":"storage.snapshot","unit_type":"gib_hours","unit_count":730,"amount":"0.0300","valid_from":"2025-01-01T00:00:00Z","valid_until":null}]},' +
  '{"family":"observability_ingested_sample","prices":[' +
  '{"product_key":"observability.ingested_sample","unit_type":"samples","unit_count":1,"amount":"0.000000012","valid_from":"2025-01-01T00:00:00Z","valid_until":null}]}' +
  ']}';
const LAST_MODIFIED_AT_T = 'Fri, 01 Mar 2030 08:30:00 GMT';

const EMPTY_LIST = '{"currency":"EUR","amounts_exclude_vat":true,"last_changed":null,"families":[]}';

/** RFC 3339 UTC with Z, milliseconds only when there are any (docs/decisions.md, "The body"). */
function rfc3339(instant: Date): string {
  const iso = instant.toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/** The endpoint's own header names (without the transport's), sorted. */
function ownHeaderNames(headers: IncomingHttpHeaders): string[] {
  return Object.keys(headers)
    .filter((name) => !TRANSPORT_HEADERS.has(name))
    .sort();
}

async function storedVersion(dataSource: DataSource): Promise<string> {
  const rows: { version: string }[] = await dataSource.query(`SELECT version::text FROM price_book_version`);
  return rows[0].version;
}

/** Has the app look at the database now and returns the version it holds. */
async function reload(app: TestApp): Promise<string | null> {
  const pricing = app.app.get(PricingService);
  await pricing.refresh();
  return pricing.health().version;
}

/** Waits until the app's LISTEN connection is up, so that a NOTIFY can reach it. */
async function untilListening(dataSource: DataSource): Promise<void> {
  await waitFor(
    'the price book listener',
    async () => {
      const rows: { n: number }[] = await dataSource.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name LIKE '% listener' AND query <> ''`,
      );
      return rows[0].n;
    },
    (n) => n > 0,
    5_000,
  );
}

describe('GET /v1/pricing', () => {
  const { create: database, start, stop } = useTestDatabase({ beforeAll: false });

  describe('the document and its headers (known book, clock at T)', () => {
    let known: TestDatabase;
    let app: TestApp;
    let etag: string;

    beforeAll(async () => {
      known = await database({ book: KNOWN_BOOK });
      app = await start({ databaseUrl: known.url, clock: new ManualClock(new Date(T)) });
      etag = (await send(app)).headers.etag as string;
    });

    it('200: the body byte for byte', async () => {
      const res = await send(app);
      expect(res.status).toBe(200);
      expect(res.body.toString('utf8')).toBe(EXPECTED_AT_T);
      expect(res.body.equals(Buffer.from(EXPECTED_AT_T, 'utf8'))).toBe(true);
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(EXPECTED_AT_T)));
    });

    it('dimensions only for compute_instance and storage_volume, absent (not null) elsewhere', async () => {
      const document = JSON.parse((await send(app)).body.toString('utf8')) as {
        families: { family: string; prices: ({ product_key: string } & Record<string, unknown>)[] }[];
      };
      const seen = { compute_instance: 0, storage_volume: 0, other: 0 };
      for (const family of document.families) {
        for (const entry of family.prices) {
          if (family.family === 'compute_instance') {
            seen.compute_instance++;
            expect(entry.dimensions).toEqual({ instance_type: entry.product_key.slice('compute.'.length) });
          } else if (family.family === 'storage_volume') {
            seen.storage_volume++;
            expect(entry.dimensions).toEqual({ storage_class: entry.product_key.slice('storage.'.length) });
          } else {
            seen.other++;
            expect(Object.keys(entry)).not.toContain('dimensions');
          }
        }
      }
      expect(seen).toEqual({ compute_instance: 3, storage_volume: 2, other: 4 });
    });

    it('never shows organization prices, prices not yet in effect, or ended prices', async () => {
      const text = (await send(app)).body.toString('utf8');
      expect(text).not.toContain('org_42');
      expect(text).not.toContain('organization');
      expect(text).not.toContain('"0.0400"');
      expect(text).not.toContain('network_vpc_ingress'); // only an organization price
      expect(text).not.toContain('observability_api_request'); // starts in 2031
      expect(text).not.toContain('network_nat_gateway'); // ended in 2029
      expect(text).not.toContain('compute.g2.8'); // ended in 2029
      expect(text).not.toContain('"0.2400"'); // replaced by the scheduled change
      expect(text).not.toMatch(/\d[eE][-+]?\d/); // no exponent form
    });

    it('200 headers exactly: weak ETag, Cache-Control, CORS, Last-Modified, Vary, Content-Type without charset', async () => {
      const res = await send(app);
      expect(res.status).toBe(200);
      expect(res.headers.etag).toMatch(WEAK_ETAG);
      expect(res.headers['cache-control']).toBe(CACHE_CONTROL);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['last-modified']).toBe(LAST_MODIFIED_AT_T);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(ownHeaderNames(res.headers)).toEqual([
        'access-control-allow-origin',
        'cache-control',
        'content-length',
        'content-type',
        'etag',
        'last-modified',
        'vary',
      ]);
    });

    it('also answers through supertest without a listening socket of its own', async () => {
      const res = await request(app.server).get(PATH).expect(200);
      expect(res.text).toBe(EXPECTED_AT_T);
      expect(res.headers.etag).toBe(etag);
    });

    /** 304: no body, with ETag, Cache-Control, CORS and Last-Modified. */
    const expect304 = (res: RawResponse): void => {
      expect(res.status).toBe(304);
      expect(res.body.length).toBe(0);
      expect(res.headers.etag).toBe(etag);
      expect(res.headers['cache-control']).toBe(CACHE_CONTROL);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['last-modified']).toBe(LAST_MODIFIED_AT_T);
    };
    const expect200 = (res: RawResponse): void => {
      expect(res.status).toBe(200);
      expect(res.body.toString('utf8')).toBe(EXPECTED_AT_T);
      expect(res.headers.etag).toBe(etag);
    };

    describe('If-None-Match', () => {
      it('the same tag: 304 with no body, with ETag, Cache-Control, CORS and Last-Modified', async () => {
        expect304(await send(app, 'GET', { 'if-none-match': etag }));
      });

      it('the strong form of our tag: 304', async () => {
        const strong = etag.slice(2);
        expect(strong).toMatch(/^"[^"]+"$/);
        expect304(await send(app, 'GET', { 'if-none-match': strong }));
      });

      it('*: 304', async () => {
        expect304(await send(app, 'GET', { 'if-none-match': '*' }));
      });

      it('a list holding our tag among others: 304', async () => {
        expect304(await send(app, 'GET', { 'if-none-match': `"abc", W/"def",${etag} , "ghi"` }));
        expect304(await send(app, 'GET', { 'if-none-match': `W/"other", ${etag.slice(2)}` }));
      });

      it('another tag, or a list of others: 200 with the body', async () => {
        expect200(await send(app, 'GET', { 'if-none-match': 'W/"not-our-tag"' }));
        expect200(await send(app, 'GET', { 'if-none-match': '"a", W/"b"' }));
        // Our tag with one character more or less is another tag.
        expect200(await send(app, 'GET', { 'if-none-match': `${etag.slice(0, -1)}x"` }));
      });

      it.each([['W/xyz'], ['"unterminated'], ['W/"unterminated'], ['xyz']])(
        'malformed header %p: 200 with the body',
        async (header) => {
          expect200(await send(app, 'GET', { 'if-none-match': header }));
        },
      );

      it('a malformed header holding our tag matches nothing: 200', async () => {
        expect200(await send(app, 'GET', { 'if-none-match': `${etag}, W/xyz` }));
        expect200(await send(app, 'GET', { 'if-none-match': `${etag} junk` }));
      });

      it('takes precedence over If-Modified-Since (RFC 9110 13.2.2)', async () => {
        const stale = 'Thu, 01 Jan 2026 00:00:00 GMT';
        expect304(await send(app, 'GET', { 'if-none-match': etag, 'if-modified-since': stale }));
        expect200(await send(app, 'GET', { 'if-none-match': 'W/"other"', 'if-modified-since': LAST_MODIFIED_AT_T }));
        expect200(await send(app, 'GET', { 'if-none-match': 'W/xyz', 'if-modified-since': LAST_MODIFIED_AT_T }));
      });
    });

    describe('If-Modified-Since (without If-None-Match)', () => {
      const since = (date: string, method = 'GET') => send(app, method, { 'if-modified-since': date });

      it('equal to Last-Modified: 304 with ETag, Cache-Control, CORS and Last-Modified', async () => {
        expect304(await since(LAST_MODIFIED_AT_T));
      });

      it('later than Last-Modified: 304', async () => {
        expect304(await since('Fri, 01 Mar 2030 08:30:01 GMT'));
        expect304(await since('Tue, 01 Jan 2099 00:00:00 GMT'));
      });

      it('older than Last-Modified, by one second: 200 with the body', async () => {
        expect200(await since('Fri, 01 Mar 2030 08:29:59 GMT'));
      });

      it('the obsolete RFC 850 and asctime forms of the same date: 304', async () => {
        expect304(await since('Friday, 01-Mar-30 08:30:00 GMT'));
        expect304(await since('Fri Mar  1 08:30:00 2030'));
      });

      it.each([
        ['not a date', 'yesterday'],
        ['a date without GMT', 'Fri, 01 Mar 2030 08:30:00'],
        ['an ISO timestamp', '2030-03-01T08:30:00Z'],
        ['two dates', `${LAST_MODIFIED_AT_T}, ${LAST_MODIFIED_AT_T}`],
        ['a day that does not exist', 'Sat, 30 Feb 2030 08:30:00 GMT'],
      ])('ignored when it is not a valid HTTP-date (%s): 200', async (_what, header) => {
        expect200(await since(header));
      });

      it('HEAD: 304 as GET, no body', async () => {
        expect304(await since(LAST_MODIFIED_AT_T, 'HEAD'));
        const head = await since('Fri, 01 Mar 2030 08:29:59 GMT', 'HEAD');
        expect([head.status, head.body.length]).toEqual([200, 0]);
      });

      it('only for GET and HEAD: POST is still 405', async () => {
        expect((await since(LAST_MODIFIED_AT_T, 'POST')).status).toBe(405);
      });
    });

    describe('If-Match and If-Unmodified-Since (RFC 9110 13.2.2: before If-None-Match and If-Modified-Since)', () => {
      /** 412: plain text, not stored, CORS, no validators. */
      const expect412 = (res: RawResponse): void => {
        expect(res.status).toBe(412);
        expect(ownHeaderNames(res.headers)).toEqual([
          'access-control-allow-origin',
          'cache-control',
          'content-length',
          'content-type',
        ]);
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.headers['access-control-allow-origin']).toBe('*');
        expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(res.body.toString('utf8')).toMatch(/^Precondition Failed: /);
      };

      it('If-Match with our tag, its strong form or another: 412 (strong comparison; our tag is weak)', async () => {
        for (const tag of [etag, etag.slice(2), `"a", ${etag.slice(2)}`, 'W/xyz']) {
          expect412(await send(app, 'GET', { 'if-match': tag }));
        }
        const head = await send(app, 'HEAD', { 'if-match': etag });
        expect([head.status, head.body.length]).toEqual([412, 0]);
      });

      it('If-Match: * passes (the list exists), then If-None-Match decides', async () => {
        expect200(await send(app, 'GET', { 'if-match': '*' }));
        expect304(await send(app, 'GET', { 'if-match': '*', 'if-none-match': etag }));
      });

      it('If-Match comes before If-None-Match, which would have answered 304', async () => {
        expect412(await send(app, 'GET', { 'if-match': etag, 'if-none-match': etag }));
      });

      it('If-Unmodified-Since: 412 when the list changed after the date, else as without it', async () => {
        expect412(await send(app, 'GET', { 'if-unmodified-since': 'Fri, 01 Mar 2030 08:29:59 GMT' }));
        expect200(await send(app, 'GET', { 'if-unmodified-since': LAST_MODIFIED_AT_T }));
        expect304(
          await send(app, 'GET', {
            'if-unmodified-since': LAST_MODIFIED_AT_T,
            'if-modified-since': LAST_MODIFIED_AT_T,
          }),
        );
        expect412(
          await send(app, 'GET', {
            'if-unmodified-since': 'Fri, 01 Mar 2030 08:29:59 GMT',
            'if-modified-since': LAST_MODIFIED_AT_T,
          }),
        );
      });

      it('If-Unmodified-Since is ignored with If-Match, or when it is not one valid HTTP-date', async () => {
        expect200(await send(app, 'GET', { 'if-match': '*', 'if-unmodified-since': 'Fri, 01 Mar 2030 08:29:59 GMT' }));
        expect200(await send(app, 'GET', { 'if-unmodified-since': '2030-03-01T08:29:59Z' }));
        expect200(await send(app, 'GET', { 'if-unmodified-since': 'yesterday' }));
      });

      it('other methods stay 405', async () => {
        expect((await send(app, 'POST', { 'if-match': etag })).status).toBe(405);
      });
    });

    describe('If-Modified-Since when two changes fall within one second', () => {
      // The list changes at 10:00:00.200 and 10:00:00.700: both have the HTTP date 10:00:00. A client
      // that fetched between them holds the older list with that same Last-Modified.
      const SECOND = 'Wed, 01 May 2030 10:00:00 GMT';
      let twice: TestApp;

      beforeAll(async () => {
        const db = await database({
          book: {
            prices: [
              price('storage.gp1', 'gib_hours', 730, '0.0480', '2030-05-01T10:00:00.200Z'),
              price('storage.snapshot', 'gib_hours', 730, '0.0300', '2030-05-01T10:00:00.700Z'),
            ],
          },
        });
        twice = await start({ databaseUrl: db.url, clock: new ManualClock(new Date('2030-05-01T10:00:00.500Z')) });
      });

      it('between the two, a client gets Last-Modified of that second', async () => {
        const res = await send(twice);
        expect(res.headers['last-modified']).toBe(SECOND);
        expect(JSON.parse(res.body.toString('utf8')).last_changed).toBe('2030-05-01T10:00:00.200Z');
      });

      it('after the second change, that date gives 200, not 304, and a later one 304', async () => {
        const clock = twice.app.get<Clock, ManualClock>(Clock);
        clock.set('2030-05-01T10:00:05Z');
        const res = await send(twice, 'GET', { 'if-modified-since': SECOND });
        expect(res.status).toBe(200);
        expect(res.headers['last-modified']).toBe(SECOND);
        expect(JSON.parse(res.body.toString('utf8')).last_changed).toBe('2030-05-01T10:00:00.700Z');
        expect((await send(twice, 'GET', { 'if-modified-since': 'Wed, 01 May 2030 10:00:01 GMT' })).status).toBe(304);
      });
    });

    it('HEAD: the headers of GET, no body', async () => {
      const get = await send(app);
      const head = await send(app, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      const own = (res: RawResponse): Record<string, unknown> =>
        Object.fromEntries(ownHeaderNames(res.headers).map((name) => [name, res.headers[name]]));
      expect(own(head)).toEqual(own(get));
      expect(head.headers['content-length']).toBe(String(Buffer.byteLength(EXPECTED_AT_T)));
    });

    it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])('%s: 405 with Allow: GET, HEAD', async (method) => {
      const res = await send(app, method);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.headers.etag).toBeUndefined();
      expect(res.body.toString('utf8')).not.toContain('currency');
    });

    it('a CORS preflight (OPTIONS with Origin and Access-Control-Request-Method): 405, no preflight answer', async () => {
      const res = await send(app, 'OPTIONS', {
        origin: 'https://example.com',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'if-none-match',
      });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.headers['access-control-allow-methods']).toBeUndefined();
      expect(res.headers['access-control-allow-headers']).toBeUndefined();
    });

    it('ignores query strings: the same body and ETag', async () => {
      for (const path of [`${PATH}?x=1`, `${PATH}?currency=USD&family=storage_volume`]) {
        const res = await send(app, 'GET', {}, path);
        expect(res.status).toBe(200);
        expect(res.body.toString('utf8')).toBe(EXPECTED_AT_T);
        expect(res.headers.etag).toBe(etag);
      }
      const conditional = await send(app, 'GET', { 'if-none-match': etag }, `${PATH}?x=1`);
      expect(conditional.status).toBe(304);
      expect((await send(app, 'POST', {}, `${PATH}?x=1`)).status).toBe(405);
    });
  });

  it('an empty database: last_changed null, no families, no Last-Modified', async () => {
    const db = await database();
    const app = await start({ databaseUrl: db.url });
    const res = await send(app);
    expect(res.status).toBe(200);
    expect(res.body.toString('utf8')).toBe(EMPTY_LIST);
    expect(res.headers.etag).toMatch(WEAK_ETAG);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['cache-control']).toBe(CACHE_CONTROL);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['last-modified']).toBeUndefined();
    const notModified = await send(app, 'GET', { 'if-none-match': res.headers.etag });
    expect(notModified.status).toBe(304);
    expect(notModified.headers['last-modified']).toBeUndefined();
    expect(notModified.headers.etag).toBe(res.headers.etag);
  });

  it('is public under the global bearer-auth guard; other routes still need a token', async () => {
    const db = await database({ book: KNOWN_BOOK });
    const app = await start({ databaseUrl: db.url, env: { API_TOKENS: 'a-token-of-at-least-16-chars' } });
    const res = await request(app.server).get(PATH);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body.currency).toBe('EUR');
    // Any Authorization header, valid or not, changes nothing: no 401 on any answer of the endpoint.
    for (const authorization of [
      'Bearer wrong-token-xxxxxxxxxx',
      'Bearer a-token-of-at-least-16-chars',
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'x'.repeat(2000),
    ]) {
      const answered = await request(app.server).get(PATH).set('Authorization', authorization);
      expect([authorization.slice(0, 20), answered.status, answered.body.currency]).toEqual([
        authorization.slice(0, 20),
        200,
        'EUR',
      ]);
      expect((await request(app.server).get(`${PATH}/?x=1`).set('Authorization', authorization)).status).toBe(200);
      expect((await request(app.server).delete(PATH).set('Authorization', authorization)).status).toBe(405);
    }
    expect((await request(app.server).head(PATH)).status).toBe(200);

    const volume = await request(app.server)
      .post('/v1/volumes')
      .send({ name: 'v', size_gib: 10, storage_class: 'gp1' });
    expect(volume.status).toBe(401);
    expect(volume.body.error.code).toBe('UNAUTHENTICATED');
  });

  it('the ETag comes from the body alone: two instances on one database serve the same tag and bytes', async () => {
    const db = await database({ book: KNOWN_BOOK });
    const first = await start({ databaseUrl: db.url, clock: new ManualClock(new Date(T)) });
    const second = await start({ databaseUrl: db.url, clock: new ManualClock(new Date(T)) });
    const a = await send(first);
    const b = await send(second);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body.equals(a.body)).toBe(true);
    expect(b.headers.etag).toBe(a.headers.etag);
    expect(b.headers['last-modified']).toBe(a.headers['last-modified']);
    // After a restart too.
    await stop(first);
    const third = await start({ databaseUrl: db.url, clock: new ManualClock(new Date(T)) });
    const c = await send(third);
    expect(c.body.toString('utf8')).toBe(EXPECTED_AT_T);
    expect(c.headers.etag).toBe(a.headers.etag);
    // The same tag on another instance answers 304.
    expect((await send(second, 'GET', { 'if-none-match': c.headers.etag })).status).toBe(304);
  });

  /** A database of its own with `prices` written by one import (at `written`), and the app on it. */
  async function startOnPrices(options: {
    prices: object[];
    clock?: ManualClock;
  }): Promise<{ dataSource: DataSource; app: TestApp; written: Date }> {
    const created = await database();
    const { instant } = await applyBook(created.dataSource, { prices: options.prices });
    const app = await start({ databaseUrl: created.url, clock: options.clock });
    return { dataSource: created.dataSource, app, written: instant };
  }

  describe('last_changed', () => {
    let dataSource: DataSource;
    let app: TestApp;

    const read = async (): Promise<{ res: RawResponse; doc: { last_changed: string | null; families: unknown[] } }> => {
      const res = await send(app);
      expect(res.status).toBe(200);
      return { res, doc: JSON.parse(res.body.toString('utf8')) };
    };

    const expectLastChanged = (res: RawResponse, doc: { last_changed: string | null }, instant: Date): void => {
      expect(doc.last_changed).toBe(rfc3339(instant));
      expect(doc.last_changed).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
      expect(res.headers['last-modified']).toBe(instant.toUTCString());
    };

    let written: Date;

    beforeAll(async () => {
      ({ dataSource, app, written } = await startOnPrices({
        prices: [price('storage.gp1', 'gib_hours', 730, '0.0480', '2025-01-01T00:00:00Z')],
      }));
    });

    it('is the instant of the latest list-price write (a set), with Last-Modified as its HTTP date', async () => {
      const { res, doc } = await read();
      expectLastChanged(res, doc, written);
    });

    it('an organization price does not move it: last_changed, ETag and body unchanged', async () => {
      const before = await read();
      const org = await applyBook(dataSource, {
        prices: [
          { ...price('storage.gp1', 'gib_hours', 730, '0.0400', '2026-01-01T00:00:00Z'), organization_id: 'org_7' },
        ],
      });
      expect(org.changed).toBe(true);
      expect(await reload(app)).toBe(org.version);
      const after = await read();
      expect(after.res.body.equals(before.res.body)).toBe(true);
      expect(after.res.headers.etag).toBe(before.res.headers.etag);
      expect(after.res.headers['last-modified']).toBe(before.res.headers['last-modified']);
    });

    it('an availability change does not move it: last_changed, ETag and body unchanged', async () => {
      const before = await read();
      const availability = await applyBook(dataSource, {
        products: [{ product_key: 'storage.gp1', on_sale: false }],
      });
      expect(availability.availabilityChanged).toBe(1);
      expect(await reload(app)).toBe(availability.version);
      const after = await read();
      expect(after.res.body.equals(before.res.body)).toBe(true);
      expect(after.res.headers.etag).toBe(before.res.headers.etag);
    });

    it('a scheduled list price (a set and an end, not yet in effect) moves it to the write', async () => {
      const before = await read();
      const scheduled = await applyBook(dataSource, {
        prices: [price('storage.gp1', 'gib_hours', 730, '0.0500', '2035-01-01T00:00:00Z')],
      });
      expect(scheduled.inserted).toBe(1);
      expect(scheduled.ended).toBe(1);
      expect(await reload(app)).toBe(scheduled.version);
      const { res, doc } = await read();
      expectLastChanged(res, doc, scheduled.instant);
      expect(res.headers.etag).not.toBe(before.res.headers.etag);
      // Only in force prices are listed: the current one, now with its scheduled end.
      expect(JSON.stringify(doc.families)).toBe(
        '[{"family":"storage_volume","prices":[{"product_key":"storage.gp1","dimensions":{"storage_class":"gp1"},' +
          '"unit_type":"gib_hours","unit_count":730,"amount":"0.0480","valid_from":"2025-01-01T00:00:00Z",' +
          '"valid_until":"2035-01-01T00:00:00Z"}]}]',
      );
    });

    it('a withdrawal of a scheduled list price moves it', async () => {
      const before = await read();
      const withdrawn = await withdrawScheduledListPrice(dataSource, 'storage.gp1', '2035-01-01T00:00:00Z');
      expect(await reload(app)).toBe(withdrawn.version);
      const { res, doc } = await read();
      expectLastChanged(res, doc, withdrawn.instant);
      expect(res.headers.etag).not.toBe(before.res.headers.etag);
      expect(JSON.stringify(doc.families)).toContain('"valid_until":null');
    });
  });

  describe('scheduled transitions, fake clock: at their instant, without a restart or a database write', () => {
    const clock = new ManualClock(new Date('2029-01-01T00:00:00Z'));
    let dataSource: DataSource;
    let app: TestApp;
    let written: Date;

    beforeAll(async () => {
      ({ dataSource, app, written } = await startOnPrices({
        clock,
        prices: [
          price('storage.gp1', 'gib_hours', 730, '0.0480', '2025-01-01T00:00:00Z'),
          price('storage.snapshot', 'gib_hours', 730, '0.0300', '2025-01-01T00:00:00Z', '2029-07-01T00:00:00Z'),
          price('network.vpc_ingress', 'gb', 1, '0.0010', '2029-09-01T00:00:00Z'),
          price('compute.g2.4', 'seconds', 3600, '0.2400', '2025-01-01T00:00:00Z'),
          price('compute.g2.4', 'seconds', 3600, '0.2600', '2030-01-01T00:00:00Z'),
        ],
      }));
    });

    const families = (res: RawResponse): string[] =>
      (JSON.parse(res.body.toString('utf8')) as { families: { family: string }[] }).families.map((f) => f.family);
    const lastChanged = (res: RawResponse): string | null =>
      (JSON.parse(res.body.toString('utf8')) as { last_changed: string | null }).last_changed;

    it('an ended price disappears at its valid_until, with a new ETag; last_changed becomes that instant', async () => {
      const version = await storedVersion(dataSource);
      clock.set('2029-06-30T23:59:59.999Z');
      const before = await send(app);
      expect(families(before)).toEqual(['compute_instance', 'storage_volume', 'storage_snapshot']);
      expect(lastChanged(before)).toBe(rfc3339(written));

      clock.advance(1);
      const after = await send(app);
      expect(after.status).toBe(200);
      expect(families(after)).toEqual(['compute_instance', 'storage_volume']);
      expect(lastChanged(after)).toBe('2029-07-01T00:00:00Z');
      expect(after.headers['last-modified']).toBe('Sun, 01 Jul 2029 00:00:00 GMT');
      expect(after.headers.etag).toMatch(WEAK_ETAG);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      expect((await send(app, 'GET', { 'if-none-match': before.headers.etag })).status).toBe(200);
      expect(await storedVersion(dataSource)).toBe(version);
      expect(app.app.get(PricingService).health().version).toBe(version);
    });

    it('a scheduled price appears at its valid_from, with a new ETag; last_changed becomes that instant', async () => {
      const version = await storedVersion(dataSource);
      clock.set('2029-08-31T23:59:59.999Z');
      const before = await send(app);
      expect(families(before)).toEqual(['compute_instance', 'storage_volume']);
      expect(lastChanged(before)).toBe('2029-07-01T00:00:00Z');

      clock.advance(1);
      const after = await send(app);
      expect(families(after)).toEqual(['compute_instance', 'network_vpc_ingress', 'storage_volume']);
      expect(after.body.toString('utf8')).toContain(
        '{"family":"network_vpc_ingress","prices":[{"product_key":"network.vpc_ingress","unit_type":"gb","unit_count":1,' +
          '"amount":"0.0010","valid_from":"2029-09-01T00:00:00Z","valid_until":null}]}',
      );
      expect(lastChanged(after)).toBe('2029-09-01T00:00:00Z');
      expect(after.headers['last-modified']).toBe('Sat, 01 Sep 2029 00:00:00 GMT');
      expect(after.headers.etag).not.toBe(before.headers.etag);
      expect(await storedVersion(dataSource)).toBe(version);
    });

    it('valid_until equal to the next valid_from: exactly one price on each side of the instant', async () => {
      const compute = (res: RawResponse): unknown =>
        (JSON.parse(res.body.toString('utf8')) as { families: { family: string; prices: unknown[] }[] }).families.find(
          (f) => f.family === 'compute_instance',
        )?.prices;
      const g24 = (amount: string, valid_from: string, valid_until: string | null) => ({
        product_key: 'compute.g2.4',
        dimensions: { instance_type: 'g2.4' },
        unit_type: 'seconds',
        unit_count: 3600,
        amount,
        valid_from,
        valid_until,
      });
      clock.set('2029-12-31T23:59:59.999Z');
      const before = await send(app);
      expect(compute(before)).toEqual([g24('0.2400', '2025-01-01T00:00:00Z', '2030-01-01T00:00:00Z')]);
      clock.advance(1);
      const at = await send(app);
      expect(compute(at)).toEqual([g24('0.2600', '2030-01-01T00:00:00Z', null)]);
      expect(lastChanged(at)).toBe('2030-01-01T00:00:00Z');
      expect(at.headers.etag).not.toBe(before.headers.etag);
    });
  });

  describe('changes reach a running instance (real clock)', () => {
    let dataSource: DataSource;
    let url: string;
    let app: TestApp;
    let tmp: string;

    beforeAll(async () => {
      const created = await database({
        book: { prices: [price('storage.gp1', 'gib_hours', 730, '0.0480', '2025-01-01T00:00:00Z')] },
      });
      dataSource = created.dataSource;
      url = created.url;
      app = await start({ databaseUrl: url });
      tmp = await mkdtemp(join(tmpdir(), 'price-list-e2e-'));
      await untilListening(dataSource);
    });

    afterAll(async () => {
      await rm(tmp, { recursive: true, force: true });
    });

    const untilEtagChanges = async (from: string | undefined, timeoutMs: number) =>
      waitFor(
        'a new ETag',
        () => send(app),
        (res) => res.status === 200 && res.headers.etag !== from,
        timeoutMs,
        10,
      );

    it('an import (applyBook) reaches it within a second (NOTIFY)', async () => {
      const before = (await send(app)).headers.etag;
      const started = performance.now();
      await applyBook(dataSource, { prices: [price('network.vpc_egress', 'gb', 1, '0.0100', '2025-01-01T00:00:00Z')] });
      const { value } = await untilEtagChanges(before, 5_000);
      const elapsedMs = performance.now() - started;
      expect(elapsedMs).toBeLessThan(1_000);
      expect(value.body.toString('utf8')).toContain('"product_key":"network.vpc_egress"');
    });

    it('an import by the CLI reaches it within a second (NOTIFY)', async () => {
      const before = (await send(app)).headers.etag;
      const file = join(tmp, 'book.json');
      await writeFile(
        file,
        JSON.stringify({ prices: [price('network.vpc_internal', 'gb', 1, '0.0020', '2025-01-01T00:00:00Z')] }),
      );
      const cli = await spawnCli(['import', file], { DATABASE_URL: url });
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      const finished = performance.now();
      const { value } = await untilEtagChanges(before, 5_000);
      expect(performance.now() - finished).toBeLessThan(1_000);
      expect(value.body.toString('utf8')).toContain('"product_key":"network.vpc_internal"');
    });

    it('a price scheduled 1.5 s ahead appears on its own, on time, without another import', async () => {
      const validFrom = new Date(Date.now() + 1_500);
      const before = (await send(app)).headers.etag;
      const applied = await applyBook(dataSource, {
        prices: [price('compute.g2.4', 'seconds', 3600, '0.0610', validFrom.toISOString())],
      });
      // The import itself arrives (last_changed moves), the price is not listed yet.
      const { value: imported } = await untilEtagChanges(before, 1_000);
      expect(app.app.get(PricingService).health().version).toBe(applied.version);
      if (Date.now() < validFrom.getTime() - 100) {
        expect(imported.body.toString('utf8')).not.toContain('compute.g2.4');
      }
      const { value: listed } = await waitFor(
        'the scheduled price',
        () => send(app),
        (res) => res.body.toString('utf8').includes('"product_key":"compute.g2.4"'),
        2_500,
        25,
      );
      const late = Date.now() - validFrom.getTime();
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThan(500);
      expect(JSON.parse(listed.body.toString('utf8')).last_changed).toBe(rfc3339(validFrom));
      expect(listed.headers.etag).not.toBe(imported.headers.etag);
      expect(await storedVersion(dataSource)).toBe(applied.version);
    });
  });

  describe('429: too many requests from one client address', () => {
    // An hour: fixed windows are aligned to the clock, and one turning during a test restarts the counts.
    const LIMITED = { PRICING_RATE_LIMIT: '3', PRICING_RATE_WINDOW_S: '3600' };
    let url: string;

    beforeAll(async () => {
      const db = await database({ book: KNOWN_BOOK });
      url = db.url;
    });

    const expect429 = (res: RawResponse, head = false): void => {
      expect(res.status).toBe(429);
      const retryAfter = res.headers['retry-after'];
      expect(retryAfter).toMatch(/^\d+$/);
      expect(Number(retryAfter)).toBeGreaterThan(0);
      expect(Number(retryAfter)).toBeLessThanOrEqual(3600);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-type']).toMatch(/^text\/plain(;|$)/);
      expect(res.headers.etag).toBeUndefined();
      if (head) return expect(res.body.length).toBe(0);
      expect(res.body.length).toBeGreaterThan(0);
      expect(res.body.toString('utf8')).not.toContain('{');
    };

    it('the 4th request gets 429 with Retry-After, Cache-Control: no-store and a plain-text body', async () => {
      const app = await start({ databaseUrl: url, env: LIMITED });
      for (let i = 0; i < 3; i++) expect((await send(app)).status).toBe(200);
      expect429(await send(app));
      expect429(await send(app, 'HEAD'), true);
      await stop(app);
    });

    it('every request counts: 304s and 405s too', async () => {
      const app = await start({ databaseUrl: url, env: LIMITED });
      const first = await send(app);
      expect(first.status).toBe(200);
      expect((await send(app, 'GET', { 'if-none-match': first.headers.etag })).status).toBe(304);
      expect((await send(app, 'POST')).status).toBe(405);
      expect429(await send(app, 'GET', { 'if-none-match': first.headers.etag }));
      expect429(await send(app, 'OPTIONS'));
      await stop(app);
    });

    it('X-Forwarded-For is ignored without TRUST_PROXY: spoofed addresses share the socket address limit', async () => {
      const app = await start({ databaseUrl: url, env: LIMITED });
      for (const xff of ['203.0.113.1', '203.0.113.2', '198.51.100.7, 203.0.113.3']) {
        expect((await send(app, 'GET', { 'x-forwarded-for': xff })).status).toBe(200);
      }
      expect429(await send(app, 'GET', { 'x-forwarded-for': '203.0.113.4' }));
      expect429(await send(app));
      await stop(app);
    });

    it('with TRUST_PROXY=loopback, two forwarded addresses get separate limits', async () => {
      const app = await start({ databaseUrl: url, env: { ...LIMITED, TRUST_PROXY: 'loopback' } });
      const from = (ip: string) => send(app, 'GET', { 'x-forwarded-for': ip });
      for (let i = 0; i < 3; i++) expect((await from('203.0.113.1')).status).toBe(200);
      expect429(await from('203.0.113.1'));
      expect((await from('203.0.113.2')).status).toBe(200);
      expect((await from('198.51.100.9, 203.0.113.2')).status).toBe(200); // the right-most untrusted hop counts
      await stop(app);
    });

    it('with TRUST_PROXY, X-Forwarded-For junk never becomes a key: the last valid hop is the client', async () => {
      const app = await start({ databaseUrl: url, env: { ...LIMITED, TRUST_PROXY: 'loopback' } });
      const from = (xff: string) => send(app, 'GET', { 'x-forwarded-for': xff });
      // Each junk value would be a fresh key if it became one; they all count as the socket's address.
      // (An address with a port is no junk: `203.0.113.1:443` is 203.0.113.1; a port beyond 65535 is.)
      for (const junk of ['junk-1', 'not-an-ip', '203.0.113.1:99999']) expect((await from(junk)).status).toBe(200);
      expect429(await from('[2001:db8::1]x'));
      expect429(await send(app)); // the socket's own address: the same key
      // Junk left of a valid hop ends the walk there: the valid hop is the client, with its own limit.
      expect((await from('junk, 203.0.113.7')).status).toBe(200);
      await stop(app);
    });

    it('IPv6 addresses of one /64 share a limit; another /64 has its own (TRUST_PROXY=loopback)', async () => {
      const app = await start({ databaseUrl: url, env: { ...LIMITED, TRUST_PROXY: 'loopback' } });
      const from = (ip: string) => send(app, 'GET', { 'x-forwarded-for': ip });
      expect((await from('2001:db8:1:2::1')).status).toBe(200);
      expect((await from('2001:db8:1:2::2')).status).toBe(200);
      expect((await from('2001:db8:1:2:ffff:ffff:ffff:ffff')).status).toBe(200);
      expect429(await from('2001:db8:1:2:abcd::9'));
      expect((await from('2001:db8:1:3::1')).status).toBe(200);
      await stop(app);
    });
  });

  it('503 when no prices can be loaded: the app listens, Retry-After: 30, no-store, plain text; live 200, ready 503', async () => {
    const app = await start({ databaseUrl: 'postgres://u:p@127.0.0.1:1/x', waitUntilReady: false });
    const res = await send(app);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-type']).toMatch(/^text\/plain(;|$)/);
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers['last-modified']).toBeUndefined();
    expect(res.body.length).toBeGreaterThan(0);
    expect(res.body.toString('utf8')).not.toContain('{');
    const head = await send(app, 'HEAD');
    expect(head.status).toBe(503);
    expect(head.headers['retry-after']).toBe('30');
    expect((await send(app, 'GET', {}, '/health/live')).status).toBe(200);
    expect((await send(app, 'GET', {}, '/health/ready')).status).toBe(503);
    // Methods other than GET and HEAD are still 405.
    expect((await send(app, 'POST')).status).toBe(405);
    await stop(app);
  });
});
