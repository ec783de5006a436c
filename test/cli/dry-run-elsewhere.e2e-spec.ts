import { randomBytes } from 'node:crypto';
import { runCli, type CliResult } from '../support/cli';
import { useTestDatabase } from '../support/database';
import { dumpableServer, pgDump, snapshotOf } from '../support/pg-dump';
import { price } from '../support/price-book-cli';
import { queryAt } from '../support/sql';
import { withDatabase } from '../support/template-database';
import { useTempDir } from '../support/temp-dir';

// A dry run writes nothing anywhere (docs/price-book-cli.md, "Which database"): pointed at the
// database of another application, it migrates nothing, says that the database has no price book
// schema, and plans against the book a first migration makes; the commands that only read stop
// (exit 8). The database is the same before and after: byte for byte by pg_dump, where this machine
// has a pg_dump that can dump the server, and by a snapshot of its catalog, sequences and rows always.

/** Another application's database: its tables, rows, a sequence used, a function, and a `migrations` table as TypeORM names it (ours too). */
const ANOTHER_APPLICATION = `
  CREATE TABLE orders (id serial PRIMARY KEY, customer text NOT NULL, total numeric(12, 2) NOT NULL);
  INSERT INTO orders (customer, total) VALUES ('acme', 12.50), ('globex', 99.00);
  CREATE TABLE migrations (id serial PRIMARY KEY, "timestamp" bigint NOT NULL, name varchar NOT NULL);
  INSERT INTO migrations ("timestamp", name) VALUES (1700000000000, 'CreateOrders1700000000000');
  CREATE SEQUENCE invoice_number START 1000;
  SELECT nextval('invoice_number');
  CREATE FUNCTION order_count() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM orders';`;

const BOOK = {
  products: [{ product_key: 'storage.io1', on_sale: false }],
  prices: [price('compute.g2.4', '0.0610', { valid_from: '2026-01-01T00:00:00Z' }), price('storage.gp1', '0.0480')],
};

/** What every dry run on such a database says and prints. */
function expectPlannedAgainstNothing(result: CliResult): void {
  expect(result.code).toBe(0);
  expect(result.target).toMatch(/ price_book_version=none via=DATABASE_URL$/);
  expect(result.stderr).toBe(
    'this database has no price book schema (none of its migrations ran): the dry run plans against the book a ' +
      'first migration makes (no prices; storage.io1 and storage.st1 off sale), and migrates nothing\n',
  );
  expect(result.stdout.split('\n')).toEqual([
    'new       compute.g2.4  list  0.0610 per 3600 seconds from 2026-01-01T00:00:00Z',
    'new       storage.gp1   list  0.0480 per 730 gib_hours from when applied',
    // storage.io1 is off sale on a new schema already: restated, not changed.
    expect.stringMatching(
      /^dry run at \S+Z: 2 prices set, 0 ended, 0 availability changes, 1 unchanged; nothing was written$/,
    ),
    '',
  ]);
}

describe('a dry run on a database of another application', () => {
  const databases = useTestDatabase({ beforeAll: false });
  const temp = useTempDir('dry-run-elsewhere');

  it('plans against a first migration’s book, migrates nothing, and leaves the database as it was; the reads stop', async () => {
    const db = await databases.create({ migrated: false });
    try {
      await queryAt(db.url, ANOTHER_APPLICATION);
      const book = await temp.write('book.json', BOOK);
      const before = await snapshotOf(db.url);
      const env = { DATABASE_URL: db.url };
      expectPlannedAgainstNothing(await runCli(['import', '--dry-run', book], env));
      // Terraform's plan: 2 when something would change.
      expect((await runCli(['import', '--dry-run', '--detailed-exitcode', book], env)).code).toBe(2);
      const json = await runCli(['import', '--dry-run', '--json', book], env);
      expect(JSON.parse(json.stdout)).toMatchObject({ dry_run: true, version: '1', summary: { prices_set: 2 } });
      // The commands that only read stop, exit 8, and say why.
      for (const command of ['show', 'export', 'verify', 'changes']) {
        const read = await runCli([command], env);
        expect({ command, code: read.code, stdout: read.stdout }).toEqual({ command, code: 8, stdout: '' });
        expect(read.stderr).toContain('but the database has no price book schema (none of its migrations ran)');
        expect(read.stderr).not.toContain('nothing was written');
      }
      expect(await snapshotOf(db.url)).toBe(before);
    } finally {
      await db.close();
    }
  });

  // pg_dump refuses a server of a later major version, and this machine's (Debian's 15) cannot dump
  // the tests' embedded PostgreSQL 18, whose package ships no pg_dump: the machine's own PostgreSQL
  // server is dumped by its own pg_dump instead (TEST_PG_DUMP_URL names another).
  const dumpable = dumpableServer();
  (dumpable ? it : it.skip)(
    'leaves the database byte for byte as pg_dump writes it (a server this machine’s pg_dump can dump)',
    async () => {
      const { url, pgDump: binary } = dumpable!;
      const name = `pricing_elsewhere_${process.pid}_${randomBytes(4).toString('hex')}`;
      await queryAt(url, `CREATE DATABASE ${name}`);
      const db = withDatabase(url, name);
      try {
        await queryAt(db, ANOTHER_APPLICATION);
        const before = await pgDump(binary, db);
        expect(before).toContain('CREATE TABLE public.orders');
        expectPlannedAgainstNothing(
          await runCli(['import', '--dry-run', await temp.write('dumped.json', BOOK)], { DATABASE_URL: db }),
        );
        expect((await runCli(['show'], { DATABASE_URL: db })).code).toBe(8);
        expect(await pgDump(binary, db)).toBe(before);
      } finally {
        await queryAt(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    },
    60_000,
  );
});

describe('a dry run on a database with the price book', () => {
  const databases = useTestDatabase({ beforeAll: false });
  const temp = useTempDir('dry-run-snapshot');

  it('writes nothing at all: no row, no sequence moved, no write of price_book_write, the catalog as it was', async () => {
    const db = await databases.create({
      book: { prices: [price('compute.g2.4', '0.0590', { valid_from: '2026-01-01T00:00:00Z' })] },
    });
    try {
      // The test database's URL is the server's superuser's: it reads every sequence and row.
      const admin = db.url;
      const before = await snapshotOf(admin);
      expect(before).toMatch(/^sequence public\.price_change_id \d+$/m);
      const book = await temp.write('change.json', {
        prices: [price('compute.g2.4', '0.0610'), price('compute.g2.8', '0.1220')],
      });
      const planned = await runCli(['import', '--dry-run', '--detailed-exitcode', book], { DATABASE_URL: db.url });
      expect(planned.code).toBe(2);
      expect(planned.stdout).toMatch(
        /: 2 prices set, 1 ended, 0 availability changes, 0 unchanged; nothing was written\n$/,
      );
      expect(await snapshotOf(admin)).toBe(before);
      // The same book applied moves them: the snapshot sees a write.
      expect((await runCli(['import', book], { DATABASE_URL: db.url })).code).toBe(0);
      expect(await snapshotOf(admin)).not.toBe(before);
      // And a book that changes nothing: exit 0 with --detailed-exitcode.
      expect((await runCli(['import', '--dry-run', '--detailed-exitcode', book], { DATABASE_URL: db.url })).code).toBe(
        0,
      );
    } finally {
      await db.close();
    }
  });
});
