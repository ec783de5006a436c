import { listPrice, organizationPrice } from '@app/pricing/testing';
import { withPriceBook } from '@app/pricing/cli';
import type { DataSource } from 'typeorm';
import { runCli, type CliResult } from './support/cli';
import { TEST_ACTOR, useTestDatabase, type TestDatabase } from './support/database';
import { inDays } from './support/price-book-cli';
import { queryAt } from './support/sql';
import { inOneTransaction, rewriteLog, rewriteRecords } from './support/tamper';

// `npm run -s pricing -- verify` (docs/operations.md, "The change log proves the book"): every link
// of the change log's hash chain, and the stored book equal to what the log says. A superuser who
// rewrites a row of the log, or a record behind it, is named; one who rewrites the whole chain is
// found only against a head recorded before.

const resources = useTestDatabase({ beforeAll: false });
const HEX64 = /^[0-9a-f]{64}$/;

/** The migrations undone down to the one that adds the chain, that one included. */
async function undoChain(dataSource: DataSource): Promise<void> {
  const chained = async () =>
    (
      await dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM migrations WHERE name = 'ChangeLogChain1764000010000'`,
      )
    )[0].n > 0;
  while (await chained()) await dataSource.undoLastMigration();
}

interface Book {
  readonly db: TestDatabase;
  readonly dataSource: DataSource;
  readonly cli: (...args: string[]) => Promise<CliResult>;
  readonly query: <T>(sql: string) => Promise<T[]>;
}

/**
 * A database whose log has every kind of entry: first prices (one with an end, one of an
 * organization), availability, a scheduled change (a set and an end), a second one withdrawn (its
 * set, its end, then the withdrawal that reopens the first), and a withdrawn end.
 */
async function bookWithEveryKindOfEntry(): Promise<Book> {
  const db = await resources.create();
  const { dataSource } = db;
  const write = (book: unknown) =>
    withPriceBook(dataSource, (priceBook) => priceBook.apply(book, { actor: TEST_ACTOR, reason: 'verify e2e' }));
  const endsIn180 = inDays(180);
  const second = inDays(730);
  await write({
    products: [{ product_key: 'storage.io1', on_sale: true }],
    prices: [
      listPrice('compute.v1.1', 'seconds', 3600, '0.10', '2025-01-01T00:00:00Z'),
      listPrice('compute.v1.2', 'seconds', 3600, '0.20', '2025-01-01T00:00:00Z', endsIn180),
      organizationPrice('org_1', 'compute.v1.1', 'seconds', 3600, '0.09', '2025-01-01T00:00:00Z'),
    ],
  });
  await write({ prices: [listPrice('compute.v1.1', 'seconds', 3600, '0.11', inDays(365))] });
  await write({ prices: [listPrice('compute.v1.1', 'seconds', 3600, '0.12', second)] });
  await withPriceBook(dataSource, async (priceBook) => {
    await priceBook.withdraw({ productKey: 'compute.v1.1', organizationId: null, validFrom: Date.parse(second) });
    await priceBook.withdraw({ productKey: 'compute.v1.2', organizationId: null, validUntil: Date.parse(endsIn180) });
  });
  return {
    db,
    dataSource,
    cli: (...args) => runCli(args, { DATABASE_URL: db.url }),
    query: (sql) => queryAt(db.url, sql),
  };
}

/** The change log's rows, oldest first. */
function logOf(book: Book): Promise<{ id: string; change: string; product_key: string; hash: string }[]> {
  return book.query(`SELECT id::text, change, product_key, hash FROM price_change ORDER BY price_change.id`);
}

function expectVerified(result: CliResult, entries: number, head: string): void {
  expect(result).toEqual({ code: 0, stdout: `${entries} entries, chain head ${head}\n`, stderr: '' });
}

/** `verify` exits 1, nothing on stdout, and says on stderr what does not match. */
function expectMismatch(result: CliResult, problem: RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 4, stdout: '' });
  expect(result.stderr).toMatch(/^the change log does not prove the book: /);
  expect(result.stderr).toMatch(problem);
}

describe('verify on a book written by the price book', () => {
  it('checks the log of a new database: the first migration’s availability, two entries', async () => {
    const db = await resources.create();
    const [{ head }] = await queryAt<{ head: string }>(
      db.url,
      `SELECT hash AS head FROM price_change ORDER BY id DESC LIMIT 1`,
    );
    expectVerified(await runCli(['verify'], { DATABASE_URL: db.url }), 2, head);
    expect(await runCli(['verify', '--json'], { DATABASE_URL: db.url })).toEqual({
      code: 0,
      stdout: `{"entries":2,"head":"${head}"}\n`,
      stderr: '',
    });
  });

  it('checks every kind of entry: exit 0, the number of entries and the last one’s hash', async () => {
    const book = await bookWithEveryKindOfEntry();
    const log = await logOf(book);
    expect(log.map((row) => row.change)).toEqual([
      'availability', // storage.io1 and storage.st1 off sale, as the first migration left them
      'availability',
      'set',
      'set',
      'set',
      'availability',
      'set',
      'end',
      'set',
      'end',
      'withdraw_price',
      'withdraw_end',
    ]);
    for (const row of log) expect(row.hash).toMatch(HEX64);
    const head = log[log.length - 1].hash;
    expectVerified(await book.cli('verify'), log.length, head);
    expect(JSON.parse((await book.cli('verify', '--json')).stdout)).toEqual({ entries: log.length, head });
  });

  it('holds what each write did, as the write left it: a set’s record without the end a later write set', async () => {
    const book = await bookWithEveryKindOfEntry();
    const effects = await book.query<{ change: string; effect: Record<string, unknown> }>(
      `SELECT change, effect FROM price_change WHERE product_key = 'compute.v1.1' AND organization_id IS NULL ORDER BY id`,
    );
    const [first, , endOfFirst] = effects;
    expect(first).toEqual({
      change: 'set',
      effect: {
        record: expect.objectContaining({ amount: '0.10', valid_until: null, superseded_by: null }),
      },
    });
    const stored = await book.query<{ id: string; valid_until: string }>(
      `SELECT id::text, (extract(epoch FROM valid_until) * 1000000)::bigint::text AS valid_until
         FROM price_record WHERE product_key = 'compute.v1.1' AND organization_id IS NULL AND amount = 0.10`,
    );
    expect(endOfFirst).toEqual({
      change: 'end',
      effect: { ends: [expect.objectContaining({ id: stored[0].id, valid_until: stored[0].valid_until })] },
    });
    const withdrawal = effects[effects.length - 1];
    expect(withdrawal).toEqual({
      change: 'withdraw_price',
      effect: {
        deleted: expect.stringMatching(/^\d+$/),
        ends: [expect.objectContaining({ amount: '0.11', valid_until: null })],
      },
    });
  });

  it('refuses a database that lacks migrations, as the other reads do, and changes nothing', async () => {
    const db = await resources.create();
    try {
      await queryAt(db.url, `DELETE FROM migrations WHERE name = 'ChangeLogChain1764000010000'`);
      const result = await runCli(['verify'], { DATABASE_URL: db.url });
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 8, stdout: '' });
      expect(result.stderr).toContain('verify only reads the database and does not migrate it');
      expect(result.stderr).toContain('ChangeLogChain1764000010000');
    } finally {
      await db.close();
    }
  });

  it('takes no arguments and no option but --json', async () => {
    for (const args of [
      ['verify', 'x'],
      ['verify', '--since', '2026-01-01T00:00:00Z'],
    ]) {
      const result = await runCli(args, {});
      expect(result.code).toBe(64);
      expect(result.stderr).toMatch(/^(verify takes no arguments|--since is not an option of verify)/);
    }
  });
});

describe('verify after a superuser changed the database behind the price book', () => {
  it('names the entry whose content was rewritten, and how many before it check out', async () => {
    const book = await bookWithEveryKindOfEntry();
    const log = await logOf(book);
    await rewriteLog(book.db.url, `UPDATE price_change SET reason = 'approved by cfo' WHERE id = ${log[6].id}`);
    expectMismatch(
      await book.cli('verify'),
      new RegExp(
        `: entry ${log[6].id} \\(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z, set compute\\.v1\\.1\\): its hash does not ` +
          `match its content and the entry before it \\(stored ${log[6].hash}, computed [0-9a-f]{64}\\): it, or its ` +
          `hash, was changed after it was written \\(the 6 entries before it check out\\)\\n$`,
      ),
    );
  });

  it('names the entry whose effect was rewritten, even with a hash recomputed for it: the next link breaks', async () => {
    const book = await bookWithEveryKindOfEntry();
    const log = await logOf(book);
    await rewriteLog(
      book.db.url,
      `UPDATE price_change SET effect = jsonb_set(effect, '{record,amount}', '"0.01"') WHERE id = ${log[2].id}`,
    );
    expectMismatch(
      await book.cli('verify'),
      new RegExp(
        `: entry ${log[2].id} \\(.*, set compute\\.v1\\.1\\): its hash does not match.*\\(the 2 entries before it check out\\)`,
      ),
    );
    // Its hash replaced by a well-formed one (whatever it is): the entry itself, or the next, fails.
    await rewriteLog(book.db.url, `UPDATE price_change SET hash = repeat('a', 64) WHERE id = ${log[2].id}`);
    expectMismatch(await book.cli('verify'), new RegExp(`: entry ${log[2].id} \\(`));
  });

  it('names the entry after one that was deleted', async () => {
    const book = await bookWithEveryKindOfEntry();
    const log = await logOf(book);
    await rewriteLog(book.db.url, `DELETE FROM price_change WHERE id = ${log[7].id}`);
    expectMismatch(
      await book.cli('verify'),
      new RegExp(`: entry ${log[8].id} \\(.*, set compute\\.v1\\.1\\): its hash does not match`),
    );
  });

  it('names the product key whose amount was rewritten behind the log, and what differs', async () => {
    const book = await bookWithEveryKindOfEntry();
    const [{ id }] = await book.query<{ id: string }>(
      `SELECT id::text FROM price_record WHERE product_key = 'compute.v1.1' AND organization_id = 'org_1'`,
    );
    await rewriteRecords(book.db.url, `UPDATE price_record SET amount = 0.01 WHERE id = ${id}`);
    expectMismatch(
      await book.cli('verify'),
      new RegExp(
        `: the book differs from its log at compute\\.v1\\.1: record ${id} differs: amount 0\\.01 stored, 0\\.09 in the log\\n$`,
      ),
    );
  });

  it('names a valid_until moved by hand, which the history trigger allows (an end to now or later) and no row says', async () => {
    const book = await bookWithEveryKindOfEntry();
    // As any role that may write price_record can: no superuser needed, nothing in the log.
    await book.query(
      `UPDATE price_record SET valid_until = now() + interval '400 days' WHERE product_key = 'compute.v1.2'`,
    );
    expectMismatch(
      await book.cli('verify'),
      /: the book differs from its log at compute\.v1\.2: record \d+ differs: valid_until \d+ stored, null in the log\n$/,
    );
  });

  it('names a record inserted by hand, and one deleted behind the log', async () => {
    const inserted = await bookWithEveryKindOfEntry();
    await inserted.query(
      `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from)
       VALUES ('compute.v1.0', 'seconds', 3600, 1, now() + interval '1 day')`,
    );
    expectMismatch(
      await inserted.cli('verify'),
      /: the book differs from its log at compute\.v1\.0: record \d+ is stored but no entry wrote it\n$/,
    );
    const deleted = await bookWithEveryKindOfEntry();
    await rewriteRecords(deleted.db.url, `DELETE FROM price_record WHERE organization_id = 'org_1'`);
    expectMismatch(
      await deleted.cli('verify'),
      /: the book differs from its log at compute\.v1\.1: record \d+ is in the log but not stored\n$/,
    );
  });

  it('names a product whose availability was changed by hand', async () => {
    const book = await bookWithEveryKindOfEntry();
    await book.query(`UPDATE product_availability SET on_sale = false WHERE product_key = 'storage.io1'`);
    expectMismatch(
      await book.cli('verify'),
      /: the book differs from its log at storage\.io1: availability is off sale stored, on sale in the log\n$/,
    );
  });

  it('finds a rewrite of the whole chain only against a head recorded before it', async () => {
    const book = await bookWithEveryKindOfEntry();
    const recorded = await book.cli('verify', '--json');
    const { entries, head } = JSON.parse(recorded.stdout) as { entries: number; head: string };
    await rewriteRecords(book.db.url, `UPDATE price_record SET amount = 0.01 WHERE organization_id = 'org_1'`);
    expect((await book.cli('verify')).code).toBe(4);
    // The whole log rechained from the book as it now is: the migration's down and up, run by
    // whoever may migrate (or any code that recomputes every hash).
    await undoChain(book.dataSource);
    await book.dataSource.runMigrations();
    const rechained = await book.cli('verify', '--json');
    expect(rechained.code).toBe(0);
    expect(JSON.parse(rechained.stdout)).toEqual({ entries, head: expect.stringMatching(HEX64) });
    expect(JSON.parse(rechained.stdout).head).not.toBe(head);
  });
});

describe('ChangeLogChain1764000010000 on a log written before it', () => {
  it('chains the rows as they stand: verify checks out, and later writes chain on', async () => {
    const book = await bookWithEveryKindOfEntry();
    const before = await logOf(book);
    // The log as it was before the chain: every row without effect or hash.
    await undoChain(book.dataSource);
    expect(
      await book.query(
        `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'price_change' AND column_name IN ('effect', 'hash')`,
      ),
    ).toEqual([{ n: 0 }]);
    await book.dataSource.runMigrations();
    const after = await book.query<{ id: string; effect: { before_chain?: boolean } }>(
      `SELECT id::text, effect FROM price_change ORDER BY price_change.id`,
    );
    expect(after.map((row) => row.id)).toEqual(before.map((row) => row.id));
    expect(after.every((row) => row.effect.before_chain === true)).toBe(true);
    const verified = await book.cli('verify');
    expect(verified).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^12 entries, chain head [0-9a-f]{64}\n$/),
      stderr: '',
    });

    await withPriceBook(book.dataSource, (priceBook) =>
      priceBook.apply(
        { prices: [listPrice('compute.v1.9', 'seconds', 3600, '1.00', inDays(1))] },
        { actor: TEST_ACTOR },
      ),
    );
    expect((await book.cli('verify')).stdout).toMatch(/^13 entries, chain head [0-9a-f]{64}\n$/);
  });

  it('keeps the log append-only after it, and refuses a row without an effect (its hash is the database’s)', async () => {
    const db = await resources.create();
    const insert = (values: string) =>
      queryAt(
        db.url,
        `INSERT INTO price_change (changed_at, product_key, change, actor, effect, hash) VALUES (now(), 'compute.v1.1', 'set', 'ana', ${values})`,
      );
    await expect(insert(`NULL, NULL`)).rejects.toThrow(/price_change_sealed/);
    await expect(insert(`'[]', repeat('0', 64)`)).rejects.toThrow(/price_change_sealed/);
    // Whatever hash a writer gives is overruled (OneClock1764000011000): the database hashes the row.
    await insert(`'{}', 'not a hash'`);
    const [row] = await queryAt<{ hash: string }>(db.url, `SELECT hash FROM price_change`);
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
    await expect(queryAt(db.url, `UPDATE price_change SET hash = repeat('1', 64)`)).rejects.toThrow(
      'the change log is append-only: UPDATE of price_change is refused',
    );
    // In replica mode too: the migration set the trigger back to fire always.
    await expect(
      inOneTransaction(db.url, ['SET LOCAL session_replication_role = replica', `DELETE FROM price_change`]),
    ).rejects.toThrow('the change log is append-only: DELETE of price_change is refused');
  });
});
