import { Clock } from '@app/clock';
import { PricingService } from '@app/pricing';
import { listPrice } from '@app/pricing/testing';
import { createHash, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { chmod, readFile, stat } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { runCli } from './support/cli';
import { rewriteRecords } from './support/tamper';
import { TcpProxy } from './support/tcp-proxy';
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

/** A port of loopback nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('keygen and audit, as a customer runs them against the service', () => {
  const resources = useTestDatabase({ beforeAll: false });
  const dir = useTempDir('audit-cli');
  let url: string;
  let dataSource: DataSource;
  let keyFile: string;
  let verifierKey: string;
  let app: TestApp;
  /** The service's one address, whatever port the app listens on (it is restarted below). */
  let proxy: TcpProxy;
  const env = (): Record<string, string> => ({
    ...RATE,
    PRICING_CHECKPOINT_KEY_FILE: keyFile,
    PRICING_CHECKPOINT_ORIGIN: ORIGIN,
  });
  const serviceUrl = () => `http://127.0.0.1:${proxy.port}/v1/pricing`;
  const audit = (state: string, key = verifierKey) =>
    runCli(['audit', serviceUrl(), '--key', key, '--state', join(dir.path, state)], {});
  const portOf = (of: TestApp) => Number(new URL(of.url!).port);
  /** A new price of compute.g2.4 from now on: one change of the list. */
  const write = (i: number) =>
    applyBook(dataSource, {
      prices: [{ product_key: 'compute.g2.4', unit_type: 'seconds', unit_count: 3600, amount: `0.0${600 + i}` }],
    });

  beforeAll(async () => {
    const db = await resources.create();
    url = db.url;
    dataSource = db.dataSource;
    keyFile = join(dir.path, 'checkpoint.pem');
    const made = await runCli(['keygen', ORIGIN, keyFile], {});
    expect({ code: made.code, target: made.target }).toEqual({ code: 0, target: undefined });
    verifierKey = made.stdout.trim();
    app = await resources.start({ databaseUrl: url, env: env(), clock: new LaterClock() });
    proxy = await TcpProxy.start({ host: '127.0.0.1', port: portOf(app) });
  });

  afterAll(() => proxy?.close());

  it('keygen: a key its owner alone reads, a verifier key as C2SP writes it, and no file replaced', async () => {
    expect(verifierKey).toMatch(/^pricing\.example\.test\/v1\/pricing\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const again = await runCli(['keygen', ORIGIN, keyFile], {});
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('exists: keygen never replaces a key');
    const bad = await runCli(['keygen', 'two words', join(dir.path, 'other.pem')], {});
    expect(bad.code).toBe(64);
  });

  it('audit: verified across ten writes, each run reading only what was added; a rewrite of the past is named', async () => {
    const first = await audit('state.json');
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(first.stdout).toMatch(
      /^verified: pricing\.example\.test\/v1\/pricing at 0 changes \(head A{43}=\); 0 changes read; kept in /,
    );
    for (let i = 1; i <= 10; i++) {
      await write(i);
      await app.app.get(PricingService).refresh();
      if (i % 5 !== 0) continue;
      const run = await audit('state.json');
      expect([run.code, run.stderr]).toEqual([0, '']);
    }
    const json = await runCli(
      ['audit', serviceUrl(), '--key', verifierKey, '--state', join(dir.path, 'state.json'), '--json'],
      {},
    );
    const verified = JSON.parse(json.stdout) as { size: number; read: number; head: string };
    // Ten writes of one price: the first lists it, each other changes it.
    expect(verified).toMatchObject({ size: 10, read: 0 });
    const state = JSON.parse(await readFile(join(dir.path, 'state.json'), 'utf8')) as { changes: unknown[] };
    expect(state.changes).toHaveLength(10);
    expect((await stat(join(dir.path, 'state.json'))).mode & 0o777).toBe(0o600);

    // Someone with the database rewrites the amount of the fourth price, recorded and served long ago.
    const [{ id }] = await dataSource.query<{ id: number }[]>(
      `SELECT id FROM price_record WHERE product_key = 'compute.g2.4' AND amount = 0.0604`,
    );
    await rewriteRecords(url, `UPDATE price_record SET amount = 0.0104 WHERE id = ${id}`);
    // Every instance restarted reads it as the book (no log entry says otherwise): the feed's past changes.
    await resources.stop(app);
    app = await resources.start({ databaseUrl: url, env: env(), clock: new LaterClock() });
    proxy.retarget({ host: '127.0.0.1', port: portOf(app) });
    const caught = await audit('state.json');
    expect(caught.code).toBe(1);
    expect(caught.stderr).toMatch(
      /^audit: history was rewritten: the change at position 3 \(at "[^"]+", "compute\.g2\.4"\) shows other prices now\n$/,
    );
    // Nothing was kept: the next run says so again.
    expect((await audit('state.json')).code).toBe(1);
  });

  it('audit: a key that did not sign the checkpoint, a service that cannot be asked', async () => {
    const other = await runCli(['keygen', ORIGIN, join(dir.path, 'other.pem')], {});
    const wrong = await audit('wrong.json', other.stdout.trim());
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`the log is not what it signs: the checkpoint: no signature of ${ORIGIN}`);
    const port = await closedPort();
    const closed = await runCli(
      ['audit', `http://127.0.0.1:${port}/v1/pricing`, '--key', verifierKey, '--state', join(dir.path, 'closed.json')],
      {},
    );
    expect(closed.code).toBe(5);
    expect(closed.stderr).toMatch(
      new RegExp(`^audit: cannot GET http://127\\.0\\.0\\.1:${port}/v1/pricing/checkpoint: ECONNREFUSED\n$`),
    );
  });
});
