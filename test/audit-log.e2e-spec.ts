import { Clock } from '@app/clock';
import { PricingService } from '@app/pricing';
import { listPrice } from '@app/pricing/testing';
import { createHash, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { chmod } from 'node:fs/promises';
import { applyBook, openDataSource, useTestDatabase } from './support/database';
import { send, type RawResponse } from './support/http';
import { useTempDir } from './support/temp-dir';
import type { TestApp } from './support/test-app';

// The public log anyone can audit (docs/price-history-api.md, "The changes as a hash chain", "The
// checkpoint"), checked as a client would: the chain recomputed here from the feed alone, by this
// file's own reading of RFC 8785 and C2SP (not the library's), against the signed checkpoint.

const ORIGIN = 'pricing.example.test/v1/pricing';

/**
 * The real clock, ten minutes on: the checkpoint counts changes at least six minutes old (its merge
 * delay), so on this clock it counts every change written now. The feed is bound by what the
 * database vouches for, which this clock does not move.
 */
class LaterClock extends Clock {
  now(): Date {
    return new Date(Date.now() + 600_000);
  }
}
const RATE = { PRICING_RATE_LIMIT: '1000000' };
const T0 = '2026-01-01T00:00:00Z';

interface ServedChange {
  readonly position: number;
  readonly hash: string;
  readonly at: string;
  readonly product_key: string;
  readonly [member: string]: unknown;
}

/** RFC 8785 for the JSON the feed holds (strings, integers, booleans, null, arrays, objects). */
function jcs(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${jcs(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The hash chain of `changes` as the document states it: SHA-256(previous ‖ JCS(change without position and hash)). */
function chainOf(changes: readonly ServedChange[]): string[] {
  let previous = Buffer.alloc(32);
  return changes.map(({ position: _position, hash: _hash, ...change }) => {
    previous = createHash('sha256').update(previous).update(jcs(change), 'utf8').digest();
    return previous.toString('base64');
  });
}

/** A C2SP signed note checked with `publicKey` named `name`: its text, or a reason it does not verify. */
function openNote(note: string, name: string, publicKey: KeyObject): string {
  const split = note.lastIndexOf('\n\n');
  const text = note.slice(0, split + 1);
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const keyId = createHash('sha256').update(`${name}\n\x01`, 'utf8').update(raw).digest().subarray(0, 4);
  for (const line of note.slice(split + 2, -1).split('\n')) {
    const [dash, signer, encoded] = line.split(' ');
    const bytes = Buffer.from(encoded, 'base64');
    if (dash !== '\u2014' || signer !== name || !bytes.subarray(0, 4).equals(keyId)) continue;
    if (verify(null, Buffer.from(text, 'utf8'), publicKey, bytes.subarray(4))) return text;
    throw new Error('the signature does not verify');
  }
  throw new Error('no signature of the key');
}

describe('the change feed as a hash chain, and its signed checkpoint', () => {
  const resources = useTestDatabase({ beforeAll: false });
  const dir = useTempDir('audit-log');
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  let keyFile: string;
  let signedEnv: Record<string, string>;
  let app: TestApp;
  let url: string;

  const get = (path: string, headers: Record<string, string> = {}) => send(app, 'GET', headers, path);
  const json = <T>(res: RawResponse): T => JSON.parse(res.body.toString('utf8')) as T;

  async function allChanges(on: TestApp = app): Promise<ServedChange[]> {
    const changes: ServedChange[] = [];
    let next: string | undefined;
    for (;;) {
      const res = await send(on, 'GET', {}, `/v1/pricing/changes?limit=2${next ? `&after=${next}` : ''}`);
      expect(res.status).toBe(200);
      const page = json<{ changes: ServedChange[]; next: string; has_more: boolean }>(res);
      changes.push(...page.changes);
      if (!page.has_more) return changes;
      next = page.next;
    }
  }

  async function checkpoint(on: TestApp = app): Promise<{ size: number; head: string; note: string }> {
    const res = await send(on, 'GET', {}, '/v1/pricing/checkpoint');
    expect(res.status).toBe(200);
    const note = res.body.toString('utf8');
    const [origin, size, head, ...rest] = openNote(note, ORIGIN, publicKey).split('\n');
    expect({ origin, rest }).toEqual({ origin: ORIGIN, rest: [''] });
    return { size: Number(size), head, note };
  }

  beforeAll(async () => {
    keyFile = await dir.write('checkpoint.pem', privateKey.export({ format: 'pem', type: 'pkcs8' }));
    await chmod(keyFile, 0o600);
    signedEnv = { ...RATE, PRICING_CHECKPOINT_KEY_FILE: keyFile, PRICING_CHECKPOINT_ORIGIN: ORIGIN };
    const db = await resources.create();
    url = db.url;
    await applyBook(db.dataSource, {
      prices: [
        listPrice('storage.gp1', 'gib_hours', 730, '0.0480', T0),
        listPrice('compute.g2.4', 'seconds', 3600, '0.0610', T0, '2026-06-01T00:00:00Z'),
        listPrice('compute.g2.4', 'seconds', 3600, '0.0590', '2026-06-01T00:00:00Z'),
      ],
    });
    app = await resources.start({ databaseUrl: url, env: signedEnv, clock: new LaterClock() });
  });

  it('gives each change its position and the hash a client recomputes from the feed alone', async () => {
    const changes = await allChanges();
    // The book was written now: its prices appear from its write on (a backfill is not the list's past).
    expect(changes.map((c) => c.product_key)).toEqual(['compute.g2.4', 'storage.gp1']); // families in section 2.4's order
    expect(changes.map((c) => c.position)).toEqual(changes.map((_, i) => i));
    expect(changes.map((c) => c.hash)).toEqual(chainOf(changes));
    // position first, hash last: the served order of a change's members.
    const page = (await get('/v1/pricing/changes?limit=1')).body.toString('utf8');
    expect(page).toMatch(
      /^\{"currency":"EUR","amounts_exclude_vat":true,"changes":\[\{"position":0,"at":"[^"]+","product_key":/,
    );
    expect(page).toMatch(/,"hash":"[A-Za-z0-9+/]{43}="\}\],"next":/);
  });

  it('signs a checkpoint of every change served, whose head is the last change’s hash', async () => {
    const changes = await allChanges();
    const { size, head, note } = await checkpoint();
    expect(size).toBe(changes.length);
    expect(head).toBe(changes[changes.length - 1].hash);
    expect(note).toBe(`${ORIGIN}\n${size}\n${head}\n\n\u2014 ${ORIGIN} ${note.split(' ').at(-1)}`);
  });

  it('answers with the headers of a short-lived public resource, 304 on its ETag, HEAD without a body', async () => {
    const res = await get('/v1/pricing/checkpoint', { 'accept-encoding': 'gzip, br' });
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'public, max-age=10',
      'access-control-allow-origin': '*',
      'content-length': String(res.body.length),
      etag: expect.stringMatching(/^W\/"[A-Za-z0-9_-]+"$/),
    });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['last-modified']).toBeUndefined();
    const again = await get('/v1/pricing/checkpoint', { 'if-none-match': res.headers.etag as string });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const head = await send(app, 'HEAD', {}, '/v1/pricing/checkpoint');
    expect([head.status, head.body.length, head.headers.etag]).toEqual([200, 0, res.headers.etag]);
    const post = await send(app, 'POST', {}, '/v1/pricing/checkpoint');
    expect([post.status, post.headers.allow]).toEqual([405, 'GET, HEAD']);
  });

  it('grows with a write once it takes effect, the changes before it as they were; every instance signs the same bytes', async () => {
    const before = await allChanges();
    const signedBefore = await checkpoint();
    const dataSource = await openDataSource(url);
    try {
      await applyBook(dataSource, {
        prices: [
          listPrice('storage.gp1', 'gib_hours', 730, '0.0480', T0),
          listPrice('compute.g2.4', 'seconds', 3600, '0.0610', T0, '2026-06-01T00:00:00Z'),
          listPrice('compute.g2.4', 'seconds', 3600, '0.0590', '2026-06-01T00:00:00Z'),
          listPrice('storage.io1', 'gib_hours', 730, '0.1250', T0),
        ],
      });
    } finally {
      await dataSource.destroy();
    }
    await app.app.get(PricingService).refresh();
    const after = await allChanges();
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.length).toBeGreaterThan(before.length);
    const signed = await checkpoint();
    expect(signed.size).toBe(after.length);
    expect(signed.head).toBe(chainOf(after).at(-1));
    expect(signed.note).not.toBe(signedBefore.note);
    const other = await resources.start({ databaseUrl: url, env: signedEnv, clock: new LaterClock() });
    expect((await checkpoint(other)).note).toBe(signed.note);
    await resources.stop(other);
  });

  it('counts only the changes at least six minutes old: on the real clock, none of these', async () => {
    const now = await resources.start({ databaseUrl: url, env: signedEnv });
    expect((await checkpoint(now)).size).toBe(0);
    await resources.stop(now);
  });

  it('is 404 where no key is configured', async () => {
    const unsigned = await resources.start({ databaseUrl: url, env: RATE });
    const res = await send(unsigned, 'GET', {}, '/v1/pricing/checkpoint');
    expect([res.status, res.headers['cache-control'], res.body.toString('utf8')]).toEqual([
      404,
      'no-store',
      'This service signs no checkpoint: no checkpoint key is configured.\n',
    ]);
    await resources.stop(unsigned);
  });
});
