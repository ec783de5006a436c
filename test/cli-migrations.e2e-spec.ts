import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appDatabaseOptions, SAMPLE_PRICE_BOOK } from '@app/control-plane';
import { dataSourceOptions } from '@app/database';
import { DataSource, type MigrationInterface } from 'typeorm';
import { runCli } from './support/cli';
import { applyBook, useTestDatabase, type TestDatabase } from './support/database';
import { queryAt } from './support/sql';
import { ALL_MIGRATIONS } from './support/contract';

// Read-only CLI commands never change the database (docs/price-book-cli.md, "Which database"):
// `show` and `export` refuse a database with pending migrations (exit 8), naming them and `npm run
// migrate`; the commands that write migrate it first, as `migrate` does.

/** What a command could have changed: every relation, function and extension, by name. */
async function schemaOf(url: string): Promise<string[]> {
  const rows = await queryAt<{ name: string }>(
    url,
    `SELECT 'relation ' || relname AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace
     UNION ALL SELECT 'function ' || proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace
     UNION ALL SELECT 'extension ' || extname FROM pg_extension
     ORDER BY 1`,
  );
  return rows.map((row) => row.name);
}

/**
 * The whole shape of the schema, one line per object: relations, columns, constraints, indexes,
 * triggers, our functions (by their source) and extensions (not their functions). Two databases
 * with the same lines have the same schema.
 */
async function shapeOf(url: string): Promise<string[]> {
  const rows = await queryAt<{ line: string }>(
    url,
    `SELECT 'relation ' || relname || ' ' || relkind::text AS line FROM pg_class WHERE relnamespace = 'public'::regnamespace
     UNION ALL SELECT 'column ' || attrelid::regclass || '.' || attname || ' ' || format_type(atttypid, atttypmod)
                      || CASE WHEN attnotnull THEN ' not null' ELSE '' END
                      || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
                 FROM pg_attribute
                 JOIN pg_class ON pg_class.oid = attrelid AND relnamespace = 'public'::regnamespace AND relkind = 'r'
                 LEFT JOIN pg_attrdef AS d ON d.adrelid = attrelid AND d.adnum = attnum
                WHERE attnum > 0 AND NOT attisdropped
     UNION ALL SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
                 FROM pg_constraint WHERE connamespace = 'public'::regnamespace
     UNION ALL SELECT 'index ' || pg_get_indexdef(indexrelid) FROM pg_index
                 JOIN pg_class ON pg_class.oid = indrelid AND relnamespace = 'public'::regnamespace
     UNION ALL SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
     UNION ALL SELECT 'function ' || oid::regprocedure || ' ' || md5(prosrc) FROM pg_proc
                WHERE pronamespace = 'public'::regnamespace
                  AND NOT EXISTS (SELECT FROM pg_depend WHERE objid = pg_proc.oid AND deptype = 'e')
     UNION ALL SELECT 'extension ' || extname FROM pg_extension
     ORDER BY 1`,
  );
  return rows.map((row) => row.line);
}

/** The migrations that change no shape: they only append to the change log (and their down leaves it). */
const DATA_ONLY = ['InitialAvailabilityLogged1764000012100'];

/** The app's migrations in the order TypeORM runs them: by the timestamp that ends their names. */
function appMigrationsInOrder(): (new () => MigrationInterface)[] {
  const all = (appDatabaseOptions('postgres://unused').migrations ?? []) as (new () => MigrationInterface)[];
  return [...all].sort((a, b) => Number(a.name.slice(-13)) - Number(b.name.slice(-13)));
}

/** Runs `work` on a DataSource at `url` that knows `migrations` (of the app's, in their order). */
async function withMigrations<T>(
  url: string,
  migrations: readonly (new () => MigrationInterface)[],
  work: (dataSource: DataSource) => Promise<T>,
): Promise<T> {
  const dataSource = new DataSource({
    ...dataSourceOptions({ ...appDatabaseOptions(url), migrations: [...migrations] }),
  });
  await dataSource.initialize();
  try {
    return await work(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

describe('the price book CLI and migrations', () => {
  const databases = useTestDatabase({ beforeAll: false });
  let empty: TestDatabase;
  const emptyUrl = (): string => empty.url;
  let dir: string;

  beforeEach(async () => {
    empty = await databases.create({ migrated: false });
  });

  afterEach(() => empty.close());

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-migrations-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['show', 'export'])('%s refuses an empty database and leaves it as it was', async (command) => {
    const before = await schemaOf(emptyUrl());
    const result = await runCli([command], { DATABASE_URL: emptyUrl() });
    expect(result.code).toBe(8);
    expect(result.stdout).toBe('');
    expect(result.target).toMatch(/ price_book_version=none /);
    expect(result.stderr).toContain(
      `${command} only reads the database and does not migrate it, but the database has no price book schema`,
    );
    expect(result.stderr).toContain('npm run migrate');
    expect(result.stderr).not.toContain('nothing was written'); // it only reads: nothing to say of writing
    expect(await schemaOf(emptyUrl())).toEqual(before); // no migrations table, nothing
  });

  it('show names only the migrations the database lacks, and works once it is migrated', async () => {
    const db = await databases.create();
    try {
      const [last] = ALL_MIGRATIONS.slice(-1);
      await queryAt(db.url, `DELETE FROM migrations WHERE name = '${last}'`);
      const refused = await runCli(['show'], { DATABASE_URL: db.url });
      expect(refused.code).toBe(8);
      expect(refused.stderr).toContain(`lacks migrations: ${last}.`);
      expect(await queryAt(db.url, `SELECT name FROM migrations WHERE name = '${last}'`)).toEqual([]);

      await queryAt(db.url, `INSERT INTO migrations (timestamp, name) VALUES (${last.slice(-13)}, '${last}')`);
      const shown = await runCli(['show'], { DATABASE_URL: db.url });
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ currency: 'EUR', families: [] });
    } finally {
      await db.close();
    }
  });

  it('import migrates an empty database first, as before', async () => {
    const book = join(dir, 'book.json');
    await writeFile(
      book,
      JSON.stringify({
        prices: [{ product_key: 'storage.gp1', unit_type: 'gib_hours', unit_count: 730, amount: '0.0480' }],
      }),
    );
    const imported = await runCli(['import', book], { DATABASE_URL: emptyUrl() });
    expect(imported.code).toBe(0);
    const applied = await queryAt<{ name: string }>(emptyUrl(), `SELECT name FROM migrations ORDER BY id`);
    expect(applied.map((row) => row.name)).toEqual(ALL_MIGRATIONS);
    expect((await runCli(['export'], { DATABASE_URL: emptyUrl() })).stdout).toContain('"amount": "0.0480"');
  });

  it('every migration’s down undoes its up, in order, on a database with a book in it', async () => {
    const ordered = appMigrationsInOrder();
    expect(ordered.map((migration) => migration.name)).toEqual(ALL_MIGRATIONS);
    // The shape after the first k migrations, going up one at a time (k = 0: TypeORM's table alone).
    const shapes: string[][] = [];
    for (let k = 0; k <= ordered.length; k++) {
      await withMigrations(emptyUrl(), ordered.slice(0, k), (dataSource) => dataSource.runMigrations());
      shapes.push(await shapeOf(emptyUrl()));
    }
    // Each changes something, but the migrations that only append to the change log.
    for (let k = 1; k <= ordered.length; k++) {
      const dataOnly = DATA_ONLY.includes(ordered[k - 1].name);
      expect({ migration: ordered[k - 1].name, changed: shapes[k].join('\n') !== shapes[k - 1].join('\n') }).toEqual({
        migration: ordered[k - 1].name,
        changed: !dataOnly,
      });
    }

    await withMigrations(emptyUrl(), ordered, async (dataSource) => {
      await applyBook(dataSource, JSON.parse(await readFile(SAMPLE_PRICE_BOOK, 'utf8')));
      for (let k = ordered.length; k > 0; k--) {
        await dataSource.undoLastMigration();
        // The first migration's down leaves btree_gist, which its up made only if missing (it may
        // have been there before: template1 of the server may hold it).
        const expected = k === 1 ? [...new Set([...shapes[0], 'extension btree_gist'])] : shapes[k - 1];
        expect({ undone: ordered[k - 1].name, shape: (await shapeOf(emptyUrl())).sort() }).toEqual({
          undone: ordered[k - 1].name,
          shape: [...expected].sort(),
        });
      }
      expect(await dataSource.showMigrations()).toBe(true); // every one pending again
      await dataSource.runMigrations();
    });
    expect(await shapeOf(emptyUrl())).toEqual(shapes[ordered.length]);
  }, 60_000);

  it('AvailabilityInChangeLog1764000008000 takes a log with availability rows written before it; they say nothing of what they set', async () => {
    const before = ALL_MIGRATIONS.indexOf('AvailabilityInChangeLog1764000008000');
    const ordered = appMigrationsInOrder();
    await withMigrations(emptyUrl(), ordered.slice(0, before), (dataSource) => dataSource.runMigrations());
    // An availability change as the writes before the migration recorded it: no on_sale.
    await queryAt(
      emptyUrl(),
      `UPDATE product_availability SET on_sale = true WHERE product_key = 'storage.io1';
       INSERT INTO price_change (changed_at, product_key, change, actor) VALUES (now(), 'storage.io1', 'availability', 'ana')`,
    );
    const off = join(dir, 'off.json');
    await writeFile(off, JSON.stringify({ products: [{ product_key: 'storage.io1', on_sale: false }] }));
    const imported = await runCli(['import', off, '--actor', 'bea'], { DATABASE_URL: emptyUrl() }); // migrates first
    expect({ code: imported.code, stderr: imported.stderr }).toEqual({ code: 0, stderr: '' });
    const changes = await runCli(['changes'], { DATABASE_URL: emptyUrl() });
    // storage.st1's first availability, logged by InitialAvailabilityLogged1764000012100 (io1 had a row).
    expect(changes.stdout.split('\n').map((line) => line.split(/ {2,}/).slice(1, 5))).toEqual([
      ['availability', 'storage.io1', '-', '-'],
      ['availability', 'storage.st1', '-', 'off-sale'],
      ['availability', 'storage.io1', '-', 'off-sale'],
      [],
    ]);
    expect(changes.stdout.split('\n').map((line) => line.split(/ {2,}/)[5])).toEqual([
      'ana',
      'pricing-schema',
      'bea',
      undefined,
    ]);
    const json = JSON.parse((await runCli(['changes', '--json'], { DATABASE_URL: emptyUrl() })).stdout) as {
      changes: { on_sale: boolean | null }[];
    };
    expect(json.changes.map((change) => change.on_sale)).toEqual([null, false, false]);
  });

  it('ChangeLogAuthors1764000005000 takes a log written before it; its rows keep no actor in changes and history', async () => {
    const before = ALL_MIGRATIONS.indexOf('ChangeLogAuthors1764000005000');
    await withMigrations(emptyUrl(), appMigrationsInOrder().slice(0, before), (dataSource) =>
      dataSource.runMigrations(),
    );
    // A price set as the writes before the migration recorded it: a record and its log row, no
    // actor or reason (there were no such columns).
    await queryAt(
      emptyUrl(),
      `WITH record AS (
         INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from)
         VALUES ('compute.g2.4', 'seconds', 3600, 0.0610, now()) RETURNING id, recorded_at)
       INSERT INTO price_change (changed_at, product_key, change, price_record_id)
       SELECT recorded_at, 'compute.g2.4', 'set', id FROM record;
       UPDATE price_book_version SET version = version + 1`,
    );
    const book = join(dir, 'g2.json');
    await writeFile(
      book,
      JSON.stringify({
        prices: [{ product_key: 'compute.g2.4', unit_type: 'seconds', unit_count: 3600, amount: '0.0590' }],
      }),
    );
    const env = { DATABASE_URL: emptyUrl() };
    const imported = await runCli(['import', book, '--actor', 'bea', '--reason', 'Q3 review'], env); // migrates first
    expect({ code: imported.code, stderr: imported.stderr }).toEqual({ code: 0, stderr: '' });

    const changes = await runCli(['changes', '--product', 'compute.g2.4'], env);
    // What each write did when it did it: the first set had no end (the import ended it after).
    expect(changes.stdout.split('\n').map((line) => line.split(/ {2,}/).slice(1))).toEqual([
      ['set', 'compute.g2.4', 'list', expect.stringMatching(/^0\.0610 per 3600 seconds from \S+Z$/), '-'],
      ['set', 'compute.g2.4', 'list', expect.stringMatching(/^0\.0590 /), 'bea', '"Q3 review"'],
      ['end', 'compute.g2.4', 'list', expect.stringMatching(/^0\.0610 /), 'bea', '"Q3 review"'],
      [],
    ]);
    const authors = (document: { changes: { actor: string | null; reason: string | null }[] }) =>
      document.changes.map(({ actor, reason }) => ({ actor, reason }));
    const signed = { actor: 'bea', reason: 'Q3 review' };
    const unsigned = { actor: null, reason: null };
    expect(authors(JSON.parse((await runCli(['changes', '--json', '--product', 'compute.g2.4'], env)).stdout))).toEqual(
      [unsigned, signed, signed],
    );

    const history = await runCli(['history', 'compute.g2.4'], env);
    const lines = history.stdout.split('\n');
    const changeLines = lines.slice(lines.indexOf('changes, oldest first:') + 1, -1);
    expect(changeLines.map((line) => line.trim().split(/ {2,}/).slice(1))).toEqual([
      ['set', expect.stringMatching(/^0\.0610 per 3600 seconds from \S+Z$/)],
      ['set', expect.stringMatching(/^0\.0590 /), 'bea', '"Q3 review"'],
      ['end set', expect.stringMatching(/^0\.0610 /), 'bea', '"Q3 review"'],
    ]);
    expect(authors(JSON.parse((await runCli(['history', 'compute.g2.4', '--json'], env)).stdout))).toEqual([
      unsigned,
      signed,
      signed,
    ]);
  });
});
