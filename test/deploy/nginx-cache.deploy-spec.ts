import { listPrice } from '@app/pricing/testing';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { applyBook, useTestDatabase } from '../support/database';
import { waitFor } from '../support/http';
import { startService, waitUntilReady, type Service } from '../support/service';
import { freePort } from '@app/control-plane';
import { answersCounted, ask, type Answer } from './client';
import { PRICING_CONF, renderPricingConf, startNginx, type Nginx } from './nginx';

// GET /v1/pricing served at scale (`npm run test:deploy`): two instances of the service on
// one PostgreSQL, behind nginx running deploy/nginx/pricing.conf. What reaches the instances is
// read from their metrics (pricing_price_list_responses_total), what the cache did from the
// X-Cache-Status header the file adds. Each test has an nginx of its own, with an empty cache,
// and client addresses of its own (127.0.0.N): the instances count every address on its own.

/** Per instance, per address, for the whole run (a day-long window never turns during a test). */
const LIMIT = 5;
/** The test-only expiry of the short-lived nginx (the shipped file honours max-age=300). */
const EXPIRY_S = 2;

const BOOK = {
  prices: [
    listPrice('compute.g2.4', 'seconds', 3600, '0.0610', '2025-01-01T00:00:00Z'),
    listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2025-01-01T00:00:00Z'),
  ],
};

interface Instance {
  readonly service: Service;
  readonly metricsPort: number;
}

describe('GET /v1/pricing, /at and /changes behind nginx (deploy/nginx/pricing.conf)', () => {
  const instances: Instance[] = [];
  const proxies: Nginx[] = [];
  let directClient = 0;

  afterAll(async () => {
    // Declared before the database: runs before it is dropped.
    for (const proxy of proxies.splice(0)) await proxy.stop();
    await Promise.all(instances.map((i) => i.service.stop()));
  });
  const db = useTestDatabase({ book: BOOK });

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const metricsPort = await freePort();
      const service = await startService({
        DATABASE_URL: db.url,
        TRUST_PROXY: '127.0.0.1', // nginx's address as the instances see it
        PRICING_RATE_LIMIT: String(LIMIT),
        PRICING_RATE_WINDOW_S: '86400',
        METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'warn',
      });
      instances.push({ service, metricsPort });
    }
    await Promise.all(instances.map((i) => waitUntilReady(i.service)));
  });

  afterEach(async () => {
    for (const proxy of proxies.splice(0)) await proxy.stop();
  });

  async function nginx(testOnlyExpiryS?: number): Promise<Nginx> {
    const proxy = await startNginx({ upstreams: instances.map((i) => `127.0.0.1:${i.service.port}`), testOnlyExpiryS });
    proxies.push(proxy);
    return proxy;
  }

  /** The instances' answers of /v1/pricing so far, by status, summed (`total`: all of them). */
  async function origin(): Promise<Record<string, number> & { total: number }> {
    const sum: Record<string, number> = {};
    for (const { metricsPort } of instances)
      for (const [status, n] of Object.entries(await answersCounted(metricsPort))) sum[status] = (sum[status] ?? 0) + n;
    return { ...sum, total: Object.values(sum).reduce((a, b) => a + b, 0) };
  }

  /** Straight from an instance, from an address used once (so that it never counts towards a test's). */
  function direct(instance: Instance, headers = {}): Promise<Answer> {
    directClient++;
    return ask(instance.service.port, { from: `127.0.1.${directClient}`, headers });
  }

  /** Asks `proxy` until its copy has passed its test-only expiry: the first answer that is not a HIT. */
  async function afterExpiry(proxy: Nginx, client: { from: string }): Promise<Answer> {
    const expired = await waitFor(
      'the copy to expire',
      () => ask(proxy.port, client),
      (a) => a.cache !== 'HIT',
      5_000,
      100,
    );
    return expired.value;
  }

  it('runs the shipped file: rendering changes nothing but the values marked CHANGE', () => {
    const asShipped = {
      upstreams: ['10.0.0.11:3000', '10.0.0.12:3000'],
      listen: '80',
      cacheDir: '/var/cache/nginx/pricing',
    };
    expect(renderPricingConf(asShipped)).toBe(readFileSync(PRICING_CONF, 'utf8'));
  });

  it('a miss, then hits: the instances are asked once, whatever the query string or HEAD', async () => {
    const proxy = await nginx();
    const client = { from: '127.0.0.2' };
    const before = await origin();
    const first = await ask(proxy.port, client);
    expect([first.status, first.cache]).toEqual([200, 'MISS']);
    expect(first.headers['cache-control']).toBe('public, max-age=300');
    expect((await origin()).total).toBe(before.total + 1);

    const again = [
      await ask(proxy.port, client),
      await ask(proxy.port, { ...client, path: '/v1/pricing?cachebuster=1' }),
      await ask(proxy.port, { ...client, path: '/v1/pricing/' }),
      await ask(proxy.port, { ...client, method: 'HEAD' }),
    ];
    expect(again.map((a) => [a.status, a.cache])).toEqual(Array(4).fill([200, 'HIT']));
    expect(again.slice(0, 3).map((a) => a.text)).toEqual(Array(3).fill(first.text));
    expect(again[3].body).toHaveLength(0);
    expect(again.map((a) => a.headers.etag)).toEqual(Array(4).fill(first.headers.etag));
    expect((await origin()).total).toBe(before.total + 1);
  });

  it('simultaneous misses: one request reaches the instances (proxy_cache_lock)', async () => {
    const proxy = await nginx();
    const before = await origin();
    const answers = await Promise.all(Array.from({ length: 20 }, () => ask(proxy.port, { from: '127.0.0.3' })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((a) => a.cache === 'MISS')).toHaveLength(1);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect((await origin()).total).toBe(before.total + 1);
  });

  it('If-None-Match with the ETag: 304 from the cache, the instances asked for the body once', async () => {
    const proxy = await nginx();
    const client = { from: '127.0.0.4' };
    const { etag } = (await direct(instances[0])).headers;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    const before = await origin();

    // A cold cache: nginx asks the instances for the whole list (it never passes the condition on),
    // keeps it, and answers the condition itself.
    const cold = await ask(proxy.port, { ...client, headers: { 'if-none-match': etag } });
    expect([cold.status, cold.cache, cold.body.length, cold.headers.etag]).toEqual([304, 'MISS', 0, etag]);
    const afterCold = await origin();
    expect([afterCold.total, afterCold['200']]).toEqual([before.total + 1, before['200'] + 1]);

    const hit = await ask(proxy.port, { ...client, headers: { 'if-none-match': etag } });
    expect([hit.status, hit.cache, hit.body.length]).toEqual([304, 'HIT', 0]);
    // With the headers of the list it stands for (section 4), as the instances' own 304 has them.
    expect(hit.headers).toMatchObject({
      etag,
      'cache-control': 'public, max-age=300',
      'access-control-allow-origin': '*',
      vary: 'Accept-Encoding',
    });
    // The strong form of the same tag matches too (section 4); another tag gets the list.
    const strong = await ask(proxy.port, { ...client, headers: { 'if-none-match': etag!.slice(2) } });
    expect([strong.status, strong.cache]).toEqual([304, 'HIT']);
    const other = await ask(proxy.port, { ...client, headers: { 'if-none-match': 'W/"other"' } });
    expect([other.status, other.cache, other.headers.etag]).toEqual([200, 'HIT', etag]);
    expect(JSON.parse(other.text)).toHaveProperty('currency', 'EUR');
    expect((await origin()).total).toBe(afterCold.total);
  });

  it('each coding is a copy of its own (Vary: Accept-Encoding): br, gzip and none, one ETag', async () => {
    const proxy = await nginx();
    const client = { from: '127.0.0.5' };
    const plain = (await direct(instances[0])).text;
    const before = await origin();
    const codings: [string | undefined, string | undefined][] = [
      ['br', 'br'],
      ['gzip', 'gzip'],
      [undefined, undefined],
    ];
    const answers: Answer[] = [];
    for (const round of ['MISS', 'HIT'])
      for (const [acceptEncoding, contentEncoding] of codings) {
        const answer = await ask(proxy.port, {
          ...client,
          headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {},
        });
        expect([answer.status, answer.cache, answer.headers['content-encoding']]).toEqual([
          200,
          round,
          contentEncoding,
        ]);
        expect(answer.headers.vary).toBe('Accept-Encoding');
        expect(answer.text).toBe(plain);
        answers.push(answer);
      }
    expect(new Set(answers.map((a) => a.headers.etag)).size).toBe(1);
    // Three different bodies, each served again as it was kept.
    const bodies = answers.map((a) => a.body.toString('base64'));
    expect(new Set(bodies).size).toBe(3);
    expect(bodies.slice(3)).toEqual(bodies.slice(0, 3));
    expect((await origin()).total).toBe(before.total + 3);
  });

  it('429 is never kept, and limits the client that X-Forwarded-For names, not the proxy', async () => {
    const proxy = await nginx();
    const a = { from: '127.0.0.6' };
    const b = { from: '127.0.0.7' };
    // A copy of its own for each request: an Accept-Encoding of its own (an unknown coding: the
    // plain list), so that every request is a miss and reaches an instance.
    let variant = 0;
    const miss = (client: { from: string }, headers = {}) =>
      ask(proxy.port, { ...client, headers: { 'accept-encoding': `x-test-${++variant}`, ...headers } });

    // Each instance counts on its own (no REDIS_URL), and nginx takes them in turn: LIMIT each.
    const statuses: number[] = [];
    for (let i = 0; i < 2 * LIMIT; i++) statuses.push((await miss(a)).status);
    expect(statuses).toEqual(Array(2 * LIMIT).fill(200));
    const refused = await miss(a);
    expect([refused.status, refused.cache, refused.headers['cache-control']]).toEqual([429, 'MISS', 'no-store']);
    const refusedVariant = { 'accept-encoding': `x-test-${variant}` };

    // The same request again: not a stored 429, but a miss again, refused by the other instance.
    const again = await ask(proxy.port, { ...a, headers: refusedVariant });
    expect([again.status, again.cache]).toEqual([429, 'MISS']);
    // A spoofed X-Forwarded-For changes nothing: nginx appends the real address, which the
    // instances read from the right.
    const spoofed = await miss(a, { 'x-forwarded-for': '198.51.100.7' });
    expect([spoofed.status, spoofed.cache]).toEqual([429, 'MISS']);

    // Another client, through the same proxy, is not limited: on both instances.
    const before = await origin();
    const other = [await ask(proxy.port, { ...b, headers: refusedVariant }), await miss(b)];
    expect(other.map((o) => [o.status, o.cache])).toEqual([
      [200, 'MISS'],
      [200, 'MISS'],
    ]);
    const after = await Promise.all(instances.map((i) => answersCounted(i.metricsPort)));
    expect(after.reduce((n, counts) => n + counts['200'], 0)).toBe(before['200'] + 2);
    expect(JSON.parse(other[0].text)).toHaveProperty('currency', 'EUR');

    // Now that copy is kept, and served to the limited client too, without asking an instance.
    const cached = await ask(proxy.port, { ...a, headers: refusedVariant });
    expect([cached.status, cached.cache, cached.text]).toEqual([200, 'HIT', other[0].text]);
  });

  it('a price change is served once the cached copy expires (test-only expiry), revalidated meanwhile', async () => {
    const proxy = await nginx(EXPIRY_S);
    const client = { from: '127.0.0.8' };
    const first = await ask(proxy.port, client);
    expect([first.status, first.cache]).toEqual([200, 'MISS']);
    const old = first.text;

    // Expired and unchanged: served at once while one request revalidates it (a 304 from an instance).
    let before = await origin();
    const expired = await afterExpiry(proxy, client);
    expect([expired.status, expired.cache, expired.text]).toEqual([200, 'STALE', old]);
    await waitFor('the revalidation', origin, (o) => o.total > before.total, 2_000);
    expect(await origin()).toMatchObject({ total: before.total + 1, '304': before['304'] + 1 });
    const revalidated = await ask(proxy.port, client);
    expect([revalidated.cache, revalidated.text]).toEqual(['HIT', old]);

    // A price change, imported as the price book CLI would, reaches both instances.
    await applyBook(db.dataSource, {
      prices: [{ product_key: 'storage.gp1', unit_type: 'gib_hours', unit_count: 730, amount: '0.0500' }],
    });
    for (const instance of instances)
      await waitFor(
        'the instance to serve the change',
        () => direct(instance),
        (a) => a.text !== old,
        5_000,
        50,
      );
    const changed = (await direct(instances[0])).text;
    expect(changed).toContain('"0.0500"');

    // The cached copy is served until it expires; then the change.
    const stillCached = await ask(proxy.port, client);
    expect([stillCached.cache, stillCached.text]).toEqual(['HIT', old]);
    before = await origin();
    const seen: Answer[] = [];
    await waitFor(
      'the change through the cache',
      async () => {
        const answer = await ask(proxy.port, client);
        seen.push(answer);
        return answer;
      },
      (a) => a.text === changed,
      (EXPIRY_S + 3) * 1000,
      100,
    );
    expect(seen.every((a) => a.status === 200 && (a.text === old || a.text === changed))).toBe(true);
    expect(seen.at(-1)!.cache).toBe('HIT');
    expect(await origin()).toMatchObject({ total: before.total + 1, '200': before['200'] + 1 });
  });

  it('the list at an instant: a miss, then a hit, kept a week when the instant is long past, whatever the query string', async () => {
    const proxy = await nginx();
    const client = { from: '127.0.0.20' };
    const path = '/v1/pricing/at/2025-06-01T00:00:00Z';
    const before = await origin();
    const first = await ask(proxy.port, { ...client, path });
    expect([first.status, first.cache]).toEqual([200, 'MISS']);
    expect(first.headers['cache-control']).toBe('public, max-age=604800, immutable');
    const again = [
      await ask(proxy.port, { ...client, path }),
      await ask(proxy.port, { ...client, path: `${path}?cachebuster=1` }),
      await ask(proxy.port, { ...client, path: '/v1/pricing/at/2025-06-01T00%3A00%3A00Z' }), // the same instant
    ];
    expect(again.map((a) => [a.status, a.cache, a.text])).toEqual(Array(3).fill([200, 'HIT', first.text]));
    expect((await origin()).total).toBe(before.total + 1);
    // Another instant is a copy of its own.
    const other = await ask(proxy.port, { ...client, path: '/v1/pricing/at/2025-07-01T00:00:00Z' });
    expect([other.status, other.cache]).toEqual([200, 'MISS']);
    expect((await origin()).total).toBe(before.total + 2);
  });

  it('the change feed: one copy per query string, each a hit the second time', async () => {
    const proxy = await nginx();
    const client = { from: '127.0.0.21' };
    // Two pages that differ whatever changes exist: their next cursors differ.
    const pages = ['/v1/pricing/changes?limit=1', '/v1/pricing/changes?since=2999-01-01T00:00:00Z'];
    const before = await origin();
    const first = [];
    for (const path of pages) first.push(await ask(proxy.port, { ...client, path }));
    expect(first.map((a) => [a.status, a.cache])).toEqual([
      [200, 'MISS'],
      [200, 'MISS'],
    ]);
    // Two pages, two bodies, each kept apart and served as kept.
    expect(first[0].text).not.toBe(first[1].text);
    const again = [];
    for (const path of pages) again.push(await ask(proxy.port, { ...client, path }));
    expect(again.map((a) => [a.status, a.cache, a.text])).toEqual(first.map((a) => [200, 'HIT', a.text]));
    expect((await origin()).total).toBe(before.total + 2);
  });

  it('a refusal (400, no-store) is never kept: each one reaches an instance', async () => {
    const proxy = await nginx();
    const client = { from: '127.0.0.22' };
    const before = await origin();
    for (const path of ['/v1/pricing/at/yesterday', '/v1/pricing/changes?limit=0']) {
      const answers = [await ask(proxy.port, { ...client, path }), await ask(proxy.port, { ...client, path })];
      expect(answers.map((a) => [path, a.status, a.cache, a.headers['cache-control']])).toEqual(
        Array(2).fill([path, 400, 'MISS', 'no-store']),
      );
    }
    expect(await origin()).toMatchObject({ total: before.total + 4, '400': (before['400'] ?? 0) + 4 });
  });

  // Last: it stops the instances.
  it('the last list is served while every instance is down, within and past its expiry', async () => {
    const proxy = await nginx();
    const short = await nginx(EXPIRY_S);
    const client = { from: '127.0.0.9' };
    const list = await ask(proxy.port, client);
    const shortList = await ask(short.port, client);
    expect([list.cache, shortList.cache, shortList.text]).toEqual(['MISS', 'MISS', list.text]);

    // One instance down: a miss is answered by the other one.
    await instances[0].service.stop();
    const failover = await ask(proxy.port, { ...client, headers: { 'accept-encoding': 'gzip' } });
    expect([failover.status, failover.cache, failover.text]).toEqual([200, 'MISS', list.text]);

    await instances[1].service.stop();
    // Within max-age: the kept copy, as if nothing happened.
    const fresh = await ask(proxy.port, client);
    expect([fresh.status, fresh.cache, fresh.text]).toEqual([200, 'HIT', list.text]);
    // Past its expiry: the stale copy, as long as nothing better comes.
    const stale = await afterExpiry(short, client);
    expect([stale.status, stale.cache, stale.text]).toEqual([200, 'STALE', list.text]);
    await sleep(200);
    const later = [await ask(short.port, client), await ask(short.port, client)];
    expect(later.map((a) => [a.status, a.text])).toEqual(Array(2).fill([200, list.text]));
    expect(later.map((a) => a.cache)).toEqual(expect.arrayContaining(['STALE']));
    // What was never kept cannot be served: a coding never asked for.
    const never = await ask(proxy.port, { ...client, headers: { 'accept-encoding': 'br' } });
    expect([never.status, never.cache]).toEqual([502, 'MISS']);
  });
});
