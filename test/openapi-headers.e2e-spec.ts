import { listPrice } from '@app/pricing/testing';
import type { OpenAPIV3_1 } from 'openapi-types';
import { useTestDatabase } from './support/database';
import { send, waitFor, type RawResponse } from './support/http';
import type { TestApp } from './support/test-app';

// /openapi.json says exactly what the price list's three resources send: for every response it
// describes, the header names it declares are the names the server sends with that status, over
// requests that make every optional header appear (each coding, HEAD, a list with and without
// Last-Modified). A header declared and never sent fails, and so does one sent and not declared.

/**
 * What the connection, not the resource, puts on an answer: Date and the connection's own
 * (RFC 9110 6.6.1, RFC 9112 9.6), and the framing of the message (Content-Length,
 * Transfer-Encoding: RFC 9112 6), which any hop may change and HTTP/2 does not carry as such.
 */
const TRANSPORT = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

const BOOK = {
  prices: [
    listPrice('compute.g2.4', 'seconds', 3600, '0.0610', '2026-01-01T00:00:00Z'),
    listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z'),
  ],
};

type Probe = () => Promise<RawResponse>;

describe('the OpenAPI document declares exactly the headers the price list’s resources send', () => {
  const t = useTestDatabase({ book: BOOK });
  let app: TestApp;
  /** PRICING_RATE_LIMIT=1: every request after the first of the window is 429. */
  let limited: TestApp;
  /** No database to read: every request is 503. */
  let unavailable: TestApp;
  let document: OpenAPIV3_1.Document;
  let etag: string;
  let changesEtag: string;
  /** An instant at which the list had prices (so Last-Modified), and one long before any. */
  let recent: string;
  const OLD = '2001-01-01T00:00:00Z';

  beforeAll(async () => {
    app = await t.start({ databaseUrl: t.url });
    limited = await t.start({ databaseUrl: t.url, env: { PRICING_RATE_LIMIT: '1' } });
    unavailable = await t.start({
      databaseUrl: 'postgres://nobody:nothing@127.0.0.1:1/none',
      waitUntilReady: false,
      env: { DATABASE_TIMEOUT_S: '1' },
    });
    const { value } = await waitFor(
      'the list to be served with Last-Modified',
      () => send(app),
      (res) => res.status === 200 && res.headers['last-modified'] !== undefined,
      10_000,
    );
    etag = value.headers.etag!;
    recent = new Date().toISOString();
    changesEtag = (await send(app, 'GET', {}, '/v1/pricing/changes')).headers.etag!;
    document = JSON.parse((await send(app, 'GET', {}, '/openapi.json')).body.toString('utf8')) as OpenAPIV3_1.Document;
  }, 30_000);

  const get =
    (target: TestApp, path: string, headers: Record<string, string> = {}, method = 'GET'): Probe =>
    () =>
      send(target, method, headers, path);
  const codings = (path: string): Probe[] => [
    get(app, path),
    get(app, path, { 'accept-encoding': 'gzip' }),
    get(app, path, { 'accept-encoding': 'br' }),
    get(app, path, { 'accept-encoding': 'br' }, 'HEAD'),
  ];
  /** The second request of the limited app's window is refused (the budget is shared by the three resources). */
  const refused =
    (path: string): Probe =>
    async () => {
      await send(limited, 'GET', {}, path);
      return send(limited, 'GET', {}, path);
    };

  /** For each path of the document and each status it describes: requests that get that status. */
  const probes = (): Record<string, Record<string, Probe[]>> => ({
    '/v1/pricing': {
      200: codings('/v1/pricing'),
      304: [get(app, '/v1/pricing', { 'if-none-match': etag })],
      412: [
        get(app, '/v1/pricing', { 'if-match': etag }),
        get(app, '/v1/pricing', { 'if-unmodified-since': 'Thu, 01 Jan 2026 00:00:00 GMT' }),
      ],
      429: [refused('/v1/pricing')],
      503: [get(unavailable, '/v1/pricing')],
    },
    '/v1/pricing/at/{instant}': {
      200: [...codings(`/v1/pricing/at/${recent}`), ...codings(`/v1/pricing/at/${OLD}`)],
      304: [
        get(app, `/v1/pricing/at/${recent}`, { 'if-none-match': etag }),
        get(app, `/v1/pricing/at/${recent}`, { 'if-modified-since': new Date().toUTCString() }),
      ],
      400: [get(app, '/v1/pricing/at/yesterday')],
      404: [get(app, '/v1/pricing/at/2999-01-01T00:00:00Z')],
      412: [get(app, `/v1/pricing/at/${recent}`, { 'if-match': etag })],
      429: [refused(`/v1/pricing/at/${recent}`)],
      503: [get(unavailable, `/v1/pricing/at/${OLD}`)],
    },
    '/v1/pricing/changes': {
      200: [...codings('/v1/pricing/changes'), ...codings('/v1/pricing/changes?limit=1')],
      304: [get(app, '/v1/pricing/changes', { 'if-none-match': changesEtag })],
      400: [get(app, '/v1/pricing/changes?limit=0')],
      412: [get(app, '/v1/pricing/changes', { 'if-match': changesEtag })],
      429: [refused('/v1/pricing/changes')],
      503: [get(unavailable, '/v1/pricing/changes')],
    },
  });

  /** What a response of the document declares: its headers, and Content-Type when it has content. */
  function declared(response: OpenAPIV3_1.ResponseObject): string[] {
    const names = Object.keys(response.headers ?? {}).map((name) => name.toLowerCase());
    if (response.content) names.push('content-type');
    return names.sort();
  }

  it.each(['/v1/pricing', '/v1/pricing/at/{instant}', '/v1/pricing/changes'])(
    '%s: every response described, with the headers sent, no more, no less',
    async (path) => {
      const ofPath = probes()[path];
      const responses = document.paths![path]!.get!.responses as Record<string, OpenAPIV3_1.ResponseObject>;
      // Every response described is probed, and every status probed is described.
      expect(Object.keys(ofPath).sort()).toEqual(Object.keys(responses).sort());
      for (const [status, requests] of Object.entries(ofPath)) {
        const sent = new Set<string>();
        for (const probe of requests) {
          const res = await probe();
          expect({ path, status: res.status }).toEqual({ path, status: Number(status) });
          for (const name of Object.keys(res.headers)) if (!TRANSPORT.has(name)) sent.add(name);
        }
        expect({ path, status, headers: [...sent].sort() }).toEqual({
          path,
          status,
          headers: declared(responses[status]),
        });
      }
    },
    30_000,
  );

  it('fails on a header declared and never sent: the 304 of the list at an instant has no Content-Encoding', async () => {
    // The check above is only as good as its comparison: it tells a 304 with codings from one without.
    const res = await get(app, `/v1/pricing/at/${recent}`, { 'if-none-match': etag, 'accept-encoding': 'br' })();
    expect(res.status).toBe(304);
    expect(res.headers['content-encoding']).toBeUndefined();
    const at304 = document.paths!['/v1/pricing/at/{instant}']!.get!.responses['304'] as OpenAPIV3_1.ResponseObject;
    expect(Object.keys(at304.headers!)).not.toContain('Content-Encoding');
    const changes200 = document.paths!['/v1/pricing/changes']!.get!.responses['200'] as OpenAPIV3_1.ResponseObject;
    expect(Object.keys(changes200.headers!)).not.toContain('Last-Modified');
  });
});
