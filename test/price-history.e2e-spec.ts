import { PricingService, type UnitType } from '@app/pricing';
import { listPrice, organizationPrice } from '@app/pricing/testing';
import { gunzipSync } from 'node:zlib';
import type { DataSource } from 'typeorm';
import { applyBook, useTestDatabase } from './support/database';
import { send, type RawResponse } from './support/http';
import type { TestApp } from './support/test-app';

// The public list's past (docs/decisions.md, "Prices as they were"): GET /v1/pricing/at/{instant}
// serves what GET /v1/pricing served then, byte for byte, and GET /v1/pricing/changes every change
// of it, once, in order. A real clock: the list is sampled as it is served, and the writes are
// stamped by the database.

const ORG = 'org_42';
const T0 = '2025-01-01T00:00:00Z';

interface Change {
  readonly at: string;
  readonly product_key: string;
  readonly family: string;
  readonly before: Record<string, unknown> | null;
  readonly after: Record<string, unknown> | null;
}

interface ChangesPage {
  readonly currency: 'EUR';
  readonly amounts_exclude_vat: true;
  readonly changes: Change[];
  readonly next: string;
  readonly has_more: boolean;
}

/** A list price from the instant of the write (no valid_from). */
const now = (productKey: string, unitType: UnitType, unitCount: number, amount: string) => ({
  product_key: productKey,
  unit_type: unitType,
  unit_count: unitCount,
  amount,
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the public list as it was: /v1/pricing/at/{instant} and /v1/pricing/changes', () => {
  const resources = useTestDatabase({ beforeAll: false });
  let dataSource: DataSource;
  let app: TestApp;
  /** What GET /v1/pricing served at each instant sampled. */
  const samples: { at: string; response: RawResponse }[] = [];

  const get = (path: string, headers = {}) => send(app, 'GET', headers, path);
  const json = <T>(res: RawResponse): T => JSON.parse(res.body.toString('utf8')) as T;

  /** Has the app read the database now (a change, and how far the feed is settled). */
  const refresh = () => app.app.get(PricingService).refresh();

  /** Samples GET /v1/pricing at an instant in a quiet moment (nothing changes just before or after). */
  async function sample(): Promise<void> {
    await refresh();
    await pause(20);
    const at = new Date().toISOString();
    const response = await get('/v1/pricing');
    expect(response.status).toBe(200);
    samples.push({ at, response });
    await pause(20);
  }

  async function allChanges(limit?: number): Promise<Change[]> {
    const changes: Change[] = [];
    let next: string | undefined;
    for (;;) {
      const query = new URLSearchParams({ ...(next && { after: next }), ...(limit && { limit: String(limit) }) });
      const res = await get(`/v1/pricing/changes?${query}`);
      expect(res.status).toBe(200);
      const page = json<ChangesPage>(res);
      changes.push(...page.changes);
      expect(page.changes.length).toBeLessThanOrEqual(limit ?? 1000);
      if (!page.has_more) return changes;
      next = page.next;
    }
  }

  beforeAll(async () => {
    const created = await resources.create({
      book: {
        prices: [
          listPrice('storage.gp1', 'gib_hours', 730, '0.0480', T0),
          listPrice('storage.snapshot', 'gib_hours', 730, '0.0200', T0),
          organizationPrice(ORG, 'storage.gp1', 'gib_hours', 730, '0.0400', T0),
        ],
      },
    });
    dataSource = created.dataSource;
    app = await resources.start({ databaseUrl: created.url });
    await sample(); // the book as loaded
    // An immediate change.
    await applyBook(dataSource, { prices: [now('storage.gp1', 'gib_hours', 730, '0.0500')] });
    await sample();
    // A price scheduled 1.5 s ahead, which takes effect by itself.
    const validFrom = new Date(Date.now() + 1_500).toISOString();
    await applyBook(dataSource, { prices: [listPrice('compute.g2.4', 'seconds', 3600, '0.0610', validFrom)] });
    await sample();
    await pause(Math.max(0, Date.parse(validFrom) - Date.now() + 50));
    await sample();
    // An end set: a change scheduled a day ahead ends the snapshot price then.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    await applyBook(dataSource, { prices: [listPrice('storage.snapshot', 'gib_hours', 730, '0.0250', tomorrow)] });
    await sample();
  }, 60_000);

  it('serves at each instant sampled the list GET /v1/pricing served then, byte for byte, with its ETag', async () => {
    expect(new Set(samples.map((s) => s.response.headers.etag)).size).toBe(samples.length);
    for (const { at, response } of samples) {
      const past = await get(`/v1/pricing/at/${at}`);
      expect(past.status).toBe(200);
      expect(past.body.toString('utf8')).toBe(response.body.toString('utf8'));
      expect(past.headers.etag).toBe(response.headers.etag);
      expect(past.headers['last-modified']).toBe(response.headers['last-modified']);
      expect(past.headers['content-type']).toBe('application/json');
      expect(past.headers['access-control-allow-origin']).toBe('*');
      expect(past.headers.vary).toBe('Accept-Encoding');
      expect(past.headers['cache-control']).toBe('public, max-age=300');
    }
  });

  it('takes any offset and cuts fractions beyond milliseconds', async () => {
    const { at, response } = samples[1];
    const local = new Date(Date.parse(at) + 3_600_000).toISOString().replace('Z', '999+01:00');
    const past = await get(`/v1/pricing/at/${encodeURIComponent(local)}`);
    expect(past.status).toBe(200);
    expect(past.headers.etag).toBe(response.headers.etag);
  });

  it('reads a leap second as the last millisecond before the next UTC day (docs/decisions.md, "Leap seconds")', async () => {
    const leap = await get('/v1/pricing/at/2016-12-31T23:59:60Z');
    const before = await get('/v1/pricing/at/2016-12-31T23:59:59.999Z');
    expect([leap.status, leap.headers.etag]).toEqual([200, before.headers.etag]);
    expect((await get(`/v1/pricing/at/${encodeURIComponent('2017-01-01T00:59:60.5+01:00')}`)).status).toBe(200);
    // Only 23:59 UTC has a second 60.
    expect((await get('/v1/pricing/at/2016-12-31T23:58:60Z')).status).toBe(400);
    const since = await get('/v1/pricing/changes?since=2016-12-31T23:59:60Z');
    expect(since.status).toBe(200);
    expect(since.body.equals((await get('/v1/pricing/changes?since=2016-12-31T23:59:59.999Z')).body)).toBe(true);
  });

  it('answers conditional requests, codings and HEAD as GET /v1/pricing does', async () => {
    // The list as loaded: no earlier change in the second of its last_changed (If-Modified-Since).
    const { at, response } = samples[0];
    const path = `/v1/pricing/at/${at}`;
    expect((await get(path, { 'if-none-match': response.headers.etag })).status).toBe(304);
    expect((await get(path, { 'if-modified-since': response.headers['last-modified'] })).status).toBe(304);
    const gzipped = await get(path, { 'accept-encoding': 'gzip' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.body).equals(response.body)).toBe(true);
    const head = await send(app, 'HEAD', {}, path);
    expect([head.status, head.body.length, head.headers.etag]).toEqual([200, 0, response.headers.etag]);
    expect((await send(app, 'POST', {}, path)).status).toBe(405);
  });

  it('answers If-Match and If-Unmodified-Since as GET /v1/pricing does: 412 when false, before the 304', async () => {
    const { at, response } = samples[0];
    for (const path of [`/v1/pricing/at/${at}`, '/v1/pricing/changes', '/v1/pricing/changes?limit=1']) {
      const current = await get(path);
      const failed = await get(path, { 'if-match': current.headers.etag, 'if-none-match': current.headers.etag });
      expect([path, failed.status, failed.headers['cache-control'], failed.headers['content-type']]).toEqual([
        path,
        412,
        'no-store',
        'text/plain; charset=utf-8',
      ]);
      expect(failed.headers['access-control-allow-origin']).toBe('*');
      expect(failed.headers.etag).toBeUndefined();
      expect((await send(app, 'HEAD', { 'if-match': `"x"` }, path)).status).toBe(412);
      expect((await get(path, { 'if-match': '*' })).status).toBe(200);
      expect((await get(path, { 'if-match': '*', 'if-none-match': current.headers.etag })).status).toBe(304);
    }
    // If-Unmodified-Since, where there is a Last-Modified (the list at an instant).
    const path = `/v1/pricing/at/${at}`;
    const before = new Date(Date.parse(response.headers['last-modified']!) - 1000).toUTCString();
    expect((await get(path, { 'if-unmodified-since': before })).status).toBe(412);
    expect((await get(path, { 'if-unmodified-since': response.headers['last-modified'] })).status).toBe(200);
    // The change feed has no Last-Modified: If-Unmodified-Since is ignored.
    expect((await get('/v1/pricing/changes', { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).status).toBe(
      200,
    );
    // Refusals stay refusals: preconditions apply only to what would be 200 or 304.
    expect((await get('/v1/pricing/at/yesterday', { 'if-match': '"x"' })).status).toBe(400);
    expect((await get('/v1/pricing/changes?limit=0', { 'if-match': '"x"' })).status).toBe(400);
  });

  it.each([
    ['POST', '/v1/pricing/changes'],
    ['DELETE', '/v1/pricing/changes'],
    ['PUT', '/v1/pricing/at/2026-03-01T00:00:00Z'],
    ['OPTIONS', '/v1/pricing/at/2026-03-01T00:00:00Z'],
  ])('%s %s: 405 with Allow: GET, HEAD, as GET /v1/pricing answers other methods', async (method, path) => {
    const res = await send(app, method, {}, path);
    expect([res.status, res.headers.allow, res.headers.etag]).toEqual([405, 'GET, HEAD', undefined]);
  });

  it('before any price: the empty document, immutable once more than 10 minutes old', async () => {
    const past = await get('/v1/pricing/at/2024-01-01T00:00:00Z');
    expect(past.status).toBe(200);
    expect(past.body.toString('utf8')).toBe(
      '{"currency":"EUR","amounts_exclude_vat":true,"last_changed":null,"families":[]}',
    );
    expect(past.headers['cache-control']).toBe('public, max-age=604800, immutable');
    expect(past.headers['last-modified']).toBeUndefined();
  });

  it.each([
    ['not a date', 'yesterday', 400],
    ['no offset', '2026-03-01T00:00:00', 400],
    ['a month 13', '2026-13-01T00:00:00Z', 400],
    ['a date alone', '2026-03-01', 400],
    ['an instant later than now', '2999-01-01T00:00:00Z', 404],
  ])('refuses %s: plain text, not stored', async (_what, instant, status) => {
    const res = await get(`/v1/pricing/at/${encodeURIComponent(instant)}`);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('gives every change of the list, oldest first, with the entries the list showed', async () => {
    await refresh();
    const changes = await allChanges();
    const listed = (res: RawResponse, key: string) =>
      json<{ families: { prices: { product_key: string }[] }[] }>(res)
        .families.flatMap((f) => f.prices)
        .find((p) => p.product_key === key) ?? null;
    const [loaded, changed, scheduled, tookEffect, ended] = samples.map((s) => s.response);
    expect(changes.map((c) => [c.product_key, c.before === null, c.after === null])).toEqual([
      ['storage.gp1', true, false], // recorded (a backfill: from its write on)
      ['storage.snapshot', true, false],
      ['storage.gp1', false, false], // the immediate change
      ['compute.g2.4', true, false], // the scheduled price, at its valid_from
      ['storage.snapshot', false, false], // its end set, a day ahead
    ]);
    expect(changes[0].after).toEqual(listed(loaded, 'storage.gp1'));
    expect(changes[1].after).toEqual(listed(loaded, 'storage.snapshot'));
    expect([changes[2].before, changes[2].after]).toEqual([
      listed(loaded, 'storage.gp1'),
      listed(changed, 'storage.gp1'),
    ]);
    expect(changes[3].after).toEqual(listed(tookEffect, 'compute.g2.4'));
    expect(listed(scheduled, 'compute.g2.4')).toBeNull();
    expect([changes[4].before, changes[4].after]).toEqual([
      listed(tookEffect, 'storage.snapshot'),
      listed(ended, 'storage.snapshot'),
    ]);
    expect(changes[3].at).toBe((listed(tookEffect, 'compute.g2.4') as unknown as { valid_from: string }).valid_from);
    expect(changes.map((c) => c.family)).toEqual([
      'storage_volume',
      'storage_snapshot',
      'storage_volume',
      'compute_instance',
      'storage_snapshot',
    ]);
    // Organizations' prices and prices not yet in effect never appear.
    expect(JSON.stringify(changes)).not.toContain('0.0400');
    expect(JSON.stringify(changes)).not.toContain('0.0250');
  });

  it('pages of one change give the same sequence', async () => {
    expect(await allChanges(1)).toEqual(await allChanges());
  });

  it('a client polling with next sees a new change once', async () => {
    await refresh();
    const first = json<ChangesPage>(await get('/v1/pricing/changes'));
    expect(first.has_more).toBe(false);
    const again = await get(`/v1/pricing/changes?after=${first.next}`);
    expect(json<ChangesPage>(again)).toMatchObject({ changes: [], next: first.next, has_more: false });
    expect(again.headers['cache-control']).toBe('public, max-age=300');
    await applyBook(dataSource, { prices: [now('network.vpc_egress', 'gb', 1, '0.0100')] });
    await refresh();
    const fresh = json<ChangesPage>(await get(`/v1/pricing/changes?after=${first.next}`));
    expect(fresh.changes.map((c) => c.product_key)).toEqual(['network.vpc_egress']);
    const after = json<ChangesPage>(await get(`/v1/pricing/changes?after=${fresh.next}`));
    expect(after.changes).toEqual([]);
    // since: from an instant on.
    const since = json<ChangesPage>(await get(`/v1/pricing/changes?since=${fresh.changes[0].at}`));
    expect(since.changes).toEqual(fresh.changes);
  });

  it('a page that more changes follow is immutable', async () => {
    const res = await get('/v1/pricing/changes?limit=1');
    expect(json<ChangesPage>(res).has_more).toBe(true);
    expect(res.headers['cache-control']).toBe('public, max-age=604800, immutable');
    expect((await get('/v1/pricing/changes?limit=1', { 'if-none-match': res.headers.etag })).status).toBe(304);
  });

  it.each([
    ['an unknown parameter', 'page=2'],
    ['after and since together', 'after=MA&since=2026-01-01T00:00:00Z'],
    ['a limit of 0', 'limit=0'],
    ['a limit over 1000', 'limit=1001'],
    ['a limit that is no number', 'limit=ten'],
    ['a parameter twice', 'limit=1&limit=2'],
    ['a since that is no date', 'since=yesterday'],
    ['a cursor this service did not write', 'after=bm90LWEtY3Vyc29y'],
  ])('refuses %s: 400, plain text, not stored', async (_what, query) => {
    const res = await get(`/v1/pricing/changes?${query}`);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('a list price no write logged (inserted by hand, or before the log kept effects)', () => {
  const resources = useTestDatabase({ beforeAll: false });

  it('is in the past from when it was recorded, not from its valid_from', async () => {
    const { url, dataSource } = await resources.create({
      book: { prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', T0)] },
    });
    const [{ recorded_at: recordedAt }] = await dataSource.query<{ recorded_at: Date }[]>(
      `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from)
       VALUES ('storage.snapshot', 'gib_hours', 730, 0.0200, '${T0}') RETURNING recorded_at`,
    );
    const app = await resources.start({ databaseUrl: url });
    await pause(Math.max(0, recordedAt.getTime() + 20 - Date.now()));
    const productsAt = async (at: number): Promise<string[]> => {
      const res = await send(app, 'GET', {}, `/v1/pricing/at/${new Date(at).toISOString()}`);
      expect(res.status).toBe(200);
      const list = JSON.parse(res.body.toString('utf8')) as { families: { prices: { product_key: string }[] }[] };
      return list.families.flatMap((family) => family.prices.map((price) => price.product_key));
    };
    expect(await productsAt(recordedAt.getTime() - 1)).toEqual(['storage.gp1']);
    expect(await productsAt(recordedAt.getTime() + 1)).toEqual(['storage.gp1', 'storage.snapshot']);
  });
});
