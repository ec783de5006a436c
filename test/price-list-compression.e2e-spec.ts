import { Logger } from '@nestjs/common';
import { PricingService } from '@app/pricing';
import type { IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { applyBook, useTestDatabase } from './support/database';
import { send, type RawResponse } from './support/http';
import type { TestApp } from './support/test-app';
import { listPrice } from '@app/pricing/testing';

// GET /v1/pricing in gzip and brotli (docs/decisions.md, "Compression"): encoded once
// per change, negotiated with Accept-Encoding and its q-values, Vary on every 200 and 304, one
// weak ETag for every coding, Content-Length per coding, HEAD alike.

/** Headers a server or Node adds to every response on the connection, not the endpoint's own. */
const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
const DECODE = { br: brotliDecompressSync, gzip: gunzipSync } as const;

/** `count` current compute prices (a list of over 1,024 prices is rendered in several slices: core/slices.ts). */
function computeBook(count: number): unknown {
  return {
    prices: Array.from({ length: count }, (_, i) =>
      listPrice(`compute.c${Math.floor(i / 100)}.${i % 100}`, 'seconds', 3600, `0.${i + 1}`, '2026-01-01T00:00:00Z'),
    ),
  };
}

function ownHeaders(headers: IncomingHttpHeaders): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !TRANSPORT_HEADERS.has(name)));
}

describe('GET /v1/pricing: compression', () => {
  const databases = useTestDatabase({ beforeAll: false });

  async function started(book: unknown): Promise<{ app: TestApp; dataSource: DataSource }> {
    const db = await databases.create({ book, app: { listen: true, env: { PRICING_RATE_LIMIT: '1000000' } } });
    return { app: db.app, dataSource: db.dataSource };
  }

  describe.each([
    ['a small list, rendered in one slice', 20],
    ['a list rendered in several slices', 3_000],
  ])('%s', (_, prices) => {
    let app: TestApp;
    let plain: RawResponse;

    beforeAll(async () => {
      ({ app } = await started(computeBook(prices)));
      plain = await send(app);
      expect(plain.status).toBe(200);
      expect(JSON.parse(plain.body.toString('utf8')).families[0].prices).toHaveLength(prices);
    }, 60_000);

    it('no Accept-Encoding: the plain body, no Content-Encoding, Vary: Accept-Encoding', () => {
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toBe('Accept-Encoding');
      expect(plain.headers['content-length']).toBe(String(plain.body.length));
    });

    it.each(['br', 'gzip'] as const)(
      '%s: decodes to the plain bytes; own Content-Length, same ETag and other headers',
      async (coding) => {
        const res = await send(app, 'GET', { 'accept-encoding': coding });
        expect(res.status).toBe(200);
        expect(res.headers['content-encoding']).toBe(coding);
        expect(res.headers['content-length']).toBe(String(res.body.length));
        expect(res.body.length).toBeLessThan(plain.body.length);
        expect(DECODE[coding](res.body).equals(plain.body)).toBe(true);
        const { 'content-encoding': encoding, 'content-length': length, ...rest } = ownHeaders(res.headers);
        const { 'content-length': plainLength, ...plainRest } = ownHeaders(plain.headers);
        expect([encoding, length, plainLength]).toEqual([coding, String(res.body.length), String(plain.body.length)]);
        expect(rest).toEqual(plainRest);
      },
    );

    it.each([
      ['gzip, deflate, br', 'br'],
      ['gzip;q=1, br;q=0.5', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['gzip;q=0, br;q=0', 'identity'],
      ['identity', 'identity'],
      ['deflate, zstd', 'identity'],
      ['identity;q=1, br;q=0.5', 'identity'],
      ['*', 'br'],
      ['*;q=0', 'identity'],
      ['', 'identity'],
    ] as const)('Accept-Encoding %j: %s', async (accept, coding) => {
      const res = await send(app, 'GET', { 'accept-encoding': accept });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding'] ?? 'identity').toBe(coding);
      expect(res.headers.vary).toBe('Accept-Encoding');
      const body = coding === 'identity' ? res.body : DECODE[coding](res.body);
      expect(body.equals(plain.body)).toBe(true);
    });

    it.each([undefined, 'gzip', 'br'])('HEAD with Accept-Encoding %s: the headers of GET, no body', async (coding) => {
      const headers = coding ? { 'accept-encoding': coding } : {};
      const get = await send(app, 'GET', headers);
      const head = await send(app, 'HEAD', headers);
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      expect(ownHeaders(head.headers)).toEqual(ownHeaders(get.headers));
    });

    it.each([undefined, 'gzip', 'br'])(
      '304 with Accept-Encoding %s: Vary, the one ETag, no body, no Content-Encoding',
      async (coding) => {
        const accept = coding ? { 'accept-encoding': coding } : {};
        for (const conditional of [
          { 'if-none-match': plain.headers.etag },
          { 'if-modified-since': new Date(Date.parse(plain.headers['last-modified']!) + 1000).toUTCString() },
        ]) {
          const res = await send(app, 'GET', { ...accept, ...conditional });
          expect(res.status).toBe(304);
          expect(res.body.length).toBe(0);
          expect(res.headers.etag).toBe(plain.headers.etag);
          expect(res.headers.vary).toBe('Accept-Encoding');
          expect(res.headers['content-encoding']).toBeUndefined();
          expect(res.headers['content-length']).toBeUndefined();
        }
      },
    );

    it('a client that decodes transparently (supertest) reads the same document', async () => {
      const res = await request(app.server).get('/v1/pricing').set('Accept-Encoding', 'gzip');
      expect(res.headers['content-encoding']).toBe('gzip');
      expect(res.text).toBe(plain.body.toString('utf8'));
    });
  });

  it('a list rendered in slices: a price scheduled ahead appears at its instant, rendered ahead', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const { app, dataSource } = await started(computeBook(1_500));
      const instant = new Date(Date.now() + 4_000);
      await applyBook(dataSource, {
        prices: [listPrice('compute.scheduled.1', 'seconds', 3600, '0.77', instant.toISOString())],
      });
      await app.app.get(PricingService).refresh();
      const seen: { sentAt: number; receivedAt: number; listed: boolean }[] = [];
      while (Date.now() < instant.getTime() + 300) {
        const sentAt = Date.now();
        const res = await send(app, 'GET', { 'accept-encoding': 'br' });
        const listed = brotliDecompressSync(res.body).includes('compute.scheduled.1');
        seen.push({ sentAt, receivedAt: Date.now(), listed });
      }
      // Every request sent at or after the instant got the new list; none answered before it did.
      expect(seen.filter((s) => s.sentAt >= instant.getTime()).every((s) => s.listed)).toBe(true);
      expect(seen.filter((s) => s.receivedAt < instant.getTime()).some((s) => s.listed)).toBe(false);
      expect(seen.some((s) => !s.listed) && seen.some((s) => s.listed)).toBe(true);
      // Swapped in from the list rendered ahead, not rendered inline on the request path.
      expect(warn.mock.calls.flat().join('\n')).not.toContain('rendering');
    } finally {
      warn.mockRestore();
    }
  }, 60_000);
});
