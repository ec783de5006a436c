import { PricingService, PublicationMissedError, type UnitType } from '@app/pricing';
import { listPrice } from '@app/pricing/testing';
import { Client } from 'pg';
import { runCli } from './support/cli';
import { withPriceBook } from '@app/pricing/cli';
import { applyBook, TEST_ACTOR, untilPublished, useTestDatabase } from './support/database';
import { send, type RawResponse } from './support/http';
import { queryAt } from './support/sql';
import { newDatabase } from './support/template-database';
import { startTestApp, type TestApp } from './support/test-app';
import { useTempDir } from './support/temp-dir';
import { createTwoRoleDatabase, type TwoRoleDatabase } from './support/two-roles';

// One clock (docs/decisions.md, "One clock"): the database dates every write, whatever SQL a
// session of the service's own role writes; a write takes effect at its publication instant,
// after it commits, so that the list every instance serves at an instant T is /at/T, byte for
// byte, for good. These specs run on the production settings of price_book_clock (a second's
// delay, 750 ms of margin), not the tests' short ones.

const PRODUCTION_CLOCK = `UPDATE price_book_clock SET publication_margin = interval '750 milliseconds',
                                                    default_delay = interval '1 second'`;
/** The advisory lock every write of the price book takes (PriceBookWrites: PRICE_BOOK_LOCK). */
const PRICE_BOOK_LOCK = 4_705_212_001;
const RATE = { PRICING_RATE_LIMIT: '1000000' };

/** A list price from the instant of the write (no valid_from). */
const fromNow = (productKey: string, unitType: UnitType, unitCount: number, amount: string) => ({
  product_key: productKey,
  unit_type: unitType,
  unit_count: unitCount,
  amount,
});

const get = (app: TestApp, path: string): Promise<RawResponse> => send(app, 'GET', {}, path);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client of its own on `url`, for a session a test holds open. */
async function session(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

describe('a session of the runtime role dates nothing itself', () => {
  const dir = useTempDir('one-clock');
  let db: TwoRoleDatabase;
  let app: TestApp;
  /** /at answers served before the attacks, by instant. */
  const served = new Map<string, string>();

  const startApp = () => startTestApp({ databaseUrl: db.runtimeUrl, listen: true, env: { ...RATE, ...db.env } });

  beforeAll(async () => {
    db = await createTwoRoleDatabase();
    expect((await runCli(['migrate'], db.env)).code).toBe(0);
    const book = await dir.write('book.json', {
      prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z')],
    });
    const imported = await runCli(['import', book, '--actor', 'ana'], db.env);
    expect({ code: imported.code, stderr: imported.stderr }).toEqual({ code: 0, stderr: '' });
    await untilPublished(new Date(/applied at (\S+):/.exec(imported.stdout)![1]));
    app = await startApp();
    await pause(50);
    for (const at of [new Date(Date.now() - 40).toISOString(), new Date(Date.now() - 3_600_000).toISOString()]) {
      const answer = await get(app, `/v1/pricing/at/${at}`);
      expect(answer.status).toBe(200);
      served.set(at, answer.body.toString('utf8'));
    }
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  /** Runs `statements` as the runtime role, in one transaction; what PostgreSQL answered. */
  async function asRuntime(...statements: string[]): Promise<{ rows?: Record<string, unknown>[]; error?: string }> {
    const client = await session(db.runtimeUrl);
    try {
      await client.query('BEGIN');
      let rows: Record<string, unknown>[] = [];
      for (const statement of statements) rows = (await client.query(statement)).rows;
      await client.query('COMMIT');
      return { rows };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      return { error: (error as Error).message };
    } finally {
      await client.end();
    }
  }

  it('a backfill and a re-price logged as months old, an entry of 4713 BC, a chosen id and hash: all dated now', async () => {
    const before = Date.now();
    const forged = await asRuntime(
      // A backfill of a key without records (allowed), its log entry claiming an instant months old.
      `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from)
       VALUES ('storage.snapshot', 'gib_hours', 730, 0.0200, '2026-01-01T00:00:00Z')`,
      `INSERT INTO price_change (id, changed_at, product_key, change, price_record_id, actor, effect, hash)
       SELECT 900000000000000, '2026-03-01T00:00:00Z', 'storage.snapshot', 'set', id, 'mallory',
              jsonb_build_object('record', jsonb_build_object('id', id::text)), repeat('0', 64)
         FROM price_record WHERE product_key = 'storage.snapshot'`,
      `INSERT INTO price_change (changed_at, product_key, change, actor, effect)
       VALUES ('4713-01-01 00:00:00+00 BC', 'storage.gp1', 'end', 'mallory', '{"ends": []}')`,
      `UPDATE price_book_version SET version = version + 1`,
      `SELECT pg_notify('pricing_price_book_changed', 'x')`,
    );
    expect(forged.error).toBeUndefined();
    const rows = await queryAt<{ id: string; changed_at: Date; recorded_at: Date | null }>(
      db.adminUrl,
      `SELECT c.id::text, c.changed_at, r.recorded_at FROM price_change c
         LEFT JOIN price_record r ON r.id = c.price_record_id WHERE c.actor = 'mallory' ORDER BY c.id`,
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(Number(row.id)).toBeLessThan(1_000); // the sequence's, not the writer's
      expect(row.changed_at.getTime()).toBeGreaterThan(before); // the write's instant, after it began
    }
    expect(rows[0].recorded_at!.getTime()).toBe(rows[0].changed_at.getTime());
    // An instant of its own is refused outright, in the past or ahead.
    for (const recordedAt of ['2026-03-01T00:00:00Z', 'infinity']) {
      const refused = await asRuntime(
        `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from, recorded_at)
         VALUES ('network.vpc_ingress', 'gb', 1, 0, '2026-01-01T00:00:00Z', '${recordedAt}')`,
      );
      expect(refused.error).toMatch(/recorded_at is the write's publication instant/);
    }
    // An end set in the past, or before the write takes effect: refused.
    const ended = await asRuntime(
      `UPDATE price_record SET valid_until = '2026-06-01T00:00:00Z' WHERE product_key = 'storage.gp1'`,
    );
    expect(ended.error).toMatch(/an end may be set to now or later/);
  });

  it('serves every /at answer it served before the forgeries unchanged, live and after a restart', async () => {
    const [{ at }] = await queryAt<{ at: Date }>(db.adminUrl, `SELECT max(published_at) AS at FROM price_book_write`);
    await untilPublished(at);
    await app.app.get(PricingService).refresh();
    for (const [at, body] of served) expect((await get(app, `/v1/pricing/at/${at}`)).body.toString('utf8')).toBe(body);
    // The backfill is listed from its write on, not from its valid_from.
    const now = JSON.parse((await get(app, '/v1/pricing')).body.toString('utf8')) as { families: unknown[] };
    expect(now.families).toHaveLength(2);
    await app.close();
    app = await startApp();
    for (const [at, body] of served) expect((await get(app, `/v1/pricing/at/${at}`)).body.toString('utf8')).toBe(body);
  });

  it('verify: the chain holds; what does not fit the log is named, and the check goes on', async () => {
    const verified = await runCli(['verify'], db.env);
    expect(verified.code).toBe(4); // the change log does not prove the book (docs/price-book-cli.md, "Exit codes")
    const lines = verified.stderr.trim().split('\n');
    expect(lines[0]).toMatch(
      /^the change log does not prove the book: entry \d+ \(.*, set storage\.snapshot\): its effect/,
    );
    // The entry that claimed 4713 BC is dated as the others and ends nothing: it fits the log.
    expect(verified.stderr).not.toMatch(/hash does not match|go backwards|end storage\.gp1/);
    expect(lines[1]).toMatch(
      /^ {2}the book differs from its log at storage\.snapshot: record \d+ is stored but no entry wrote it$/,
    );
    expect(lines).toHaveLength(2);
  });
});

describe('the list served at an instant is /at of that instant', () => {
  const test = useTestDatabase({
    book: { prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z')] },
  });
  let app: TestApp;

  beforeAll(async () => {
    await test.dataSource.query(PRODUCTION_CLOCK);
    app = await test.start({ databaseUrl: test.url, env: RATE });
    // One write first, not polled: the reload's code runs once before the writes measured (cold, in
    // a fresh clone's first minute, the instance missed the production margin).
    await applyBook(test.dataSource, { prices: [fromNow('storage.gp1', 'gib_hours', 730, '0.0490')] });
  });

  /**
   * GET /v1/pricing over and over while `write` runs and its instant passes; every answer with when it
   * was asked and answered. Before `denseFrom` (ms), one request every 50 ms: each sample costs two
   * /at requests to check, and a long wait for a late instant needs no finer grain.
   */
  async function pollAround(
    write: () => Promise<{ instant: Date }>,
    denseFrom = 0,
  ): Promise<{ from: number; to: number; body: string }[]> {
    const samples: { from: number; to: number; body: string }[] = [];
    let until = Infinity;
    const polling = (async () => {
      while (Date.now() < until) {
        const from = Date.now();
        const answer = await get(app, '/v1/pricing');
        samples.push({ from, to: Date.now(), body: answer.body.toString('utf8') });
        if (Date.now() < denseFrom) await pause(50);
      }
    })();
    const { instant } = await write();
    until = instant.getTime() + 300;
    await polling;
    return samples;
  }

  /** Every sample is /at of an instant it was asked or answered at. */
  async function expectServedAsAt(samples: { from: number; to: number; body: string }[]): Promise<void> {
    const atOf = new Map<number, string>();
    const at = async (ms: number) => {
      if (!atOf.has(ms))
        atOf.set(ms, (await get(app, `/v1/pricing/at/${new Date(ms).toISOString()}`)).body.toString('utf8'));
      return atOf.get(ms)!;
    };
    const bodies = new Set<string>();
    for (const sample of samples) {
      const candidates = [await at(sample.from), await at(sample.to)];
      expect(candidates).toContain(sample.body);
      bodies.add(sample.body);
    }
    expect(bodies.size).toBe(2); // the list before the write, then after it
  }

  it('across an immediate write of one price', async () => {
    const samples = await pollAround(() =>
      applyBook(test.dataSource, { prices: [fromNow('storage.gp1', 'gib_hours', 730, '0.0500')] }),
    );
    await expectServedAsAt(samples);
  }, 30_000);

  it('across an immediate write of 3,000 prices', async () => {
    const prices = Array.from({ length: 3_000 }, (_, i) =>
      fromNow(`compute.c${Math.floor(i / 100)}.${i % 100}`, 'seconds', 3600, `0.${i + 1}`),
    );
    // A large write names a later instant (docs/decisions.md, "One clock"): 10 s on, so that it
    // commits in time and an instance has it ready even starved of CPU (the first minute of a fresh
    // clone's suite, compiling every file beside embedded PostgreSQLs starting): 3 s was missed there.
    const publishInMs = 10_000;
    const write = async () => {
      const result = await withPriceBook(test.dataSource, (book) =>
        book.apply({ prices }, { actor: TEST_ACTOR, publishInMs }),
      );
      await untilPublished(result.instant);
      return result;
    };
    const samples = await pollAround(write, Date.now() + publishInMs - 1_000);
    await expectServedAsAt(samples);
  }, 60_000);

  it('a write held open by a table lock is refused at its commit: no answer served meanwhile changes', async () => {
    const lock = await session(test.url);
    const instant = new Date(Date.now() + 50).toISOString();
    await pause(60);
    const before = (await get(app, `/v1/pricing/at/${instant}`)).body.toString('utf8');
    const listBefore = (await get(app, '/v1/pricing')).body.toString('utf8');
    const rowsBefore = await test.dataSource.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM price_book_write`);
    try {
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE price_change IN SHARE ROW EXCLUSIVE MODE'); // no INSERT gets through
      const write = applyBook(test.dataSource, { prices: [fromNow('storage.gp1', 'gib_hours', 730, '0.0600')] });
      const outcome = write.then(
        () => 'applied',
        (error: unknown) => error,
      );
      await pause(2_000);
      expect((await get(app, `/v1/pricing/at/${instant}`)).body.toString('utf8')).toBe(before);
      expect((await get(app, '/v1/pricing')).body.toString('utf8')).toBe(listBefore);
      await lock.query('COMMIT');
      expect(await outcome).toBeInstanceOf(PublicationMissedError);
    } finally {
      await lock.end();
    }
    await app.app.get(PricingService).refresh();
    expect((await get(app, `/v1/pricing/at/${instant}`)).body.toString('utf8')).toBe(before);
    expect((await get(app, '/v1/pricing')).body.toString('utf8')).toBe(listBefore);
    expect(await test.dataSource.query(`SELECT count(*)::int AS n FROM price_book_write`)).toEqual(rowsBefore);
  }, 30_000);

  it('a write held open in another database does not hold the change feed back', async () => {
    const other = await newDatabase(false);
    const holder = await session(other.url);
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [PRICE_BOOK_LOCK]);
      // The end of the feed so far: its last page.
      let last = { next: '', has_more: true };
      while (last.has_more) {
        const query = last.next === '' ? '' : `?after=${last.next}`;
        last = JSON.parse((await get(app, `/v1/pricing/changes${query}`)).body.toString('utf8')) as typeof last;
      }
      const { instant } = await applyBook(test.dataSource, {
        prices: [fromNow('storage.gp1', 'gib_hours', 730, '0.0700')],
      });
      const deadline = instant.getTime() + 3_000;
      let seen: { changes: { at: string }[] } = { changes: [] };
      while (seen.changes.length === 0 && Date.now() < deadline) {
        seen = JSON.parse(
          (await get(app, `/v1/pricing/changes?after=${last.next}`)).body.toString('utf8'),
        ) as typeof seen;
        if (seen.changes.length === 0) await pause(50);
      }
      expect(seen.changes.map((change) => Date.parse(change.at))).toEqual([instant.getTime()]);
    } finally {
      await holder.end();
      await other.drop();
    }
  }, 30_000);
});
