import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, withDatabase, type TestDatabase } from '@app/pricing/testing';
import { runCli } from './support/cli';
import { queryAt } from './support/sql';
import { ALL_MIGRATIONS } from './support/contract';

// Read-only CLI commands never change the database (docs/price-book-cli.md, "Start-up"): `show`
// and `export` refuse a database with pending migrations, naming them and `npm run migrate`; the
// commands that write migrate it first, as `migrate` does.

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

describe('the price book CLI and migrations', () => {
  const adminUrl = (): string => process.env.TEST_ADMIN_DATABASE_URL!;
  const name = `pricing_cli_migrations_${process.pid}`;
  const emptyUrl = (): string => withDatabase(adminUrl(), name);
  let dir: string;

  beforeEach(async () => {
    await queryAt(adminUrl(), `CREATE DATABASE ${name}`);
  });

  afterEach(async () => {
    await queryAt(adminUrl(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-migrations-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['show', 'export'])('%s refuses an empty database and leaves it as it was', async (command) => {
    const before = await schemaOf(emptyUrl());
    const result = await runCli([command], { DATABASE_URL: emptyUrl() });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`${command} only reads the database and does not migrate it`);
    expect(result.stderr).toContain(ALL_MIGRATIONS.join(', '));
    expect(result.stderr).toContain('npm run migrate');
    expect(await schemaOf(emptyUrl())).toEqual(before); // no migrations table, nothing
  });

  it('show names only the migrations the database lacks, and works once it is migrated', async () => {
    const db: TestDatabase = await createTestDatabase();
    try {
      const [last] = ALL_MIGRATIONS.slice(-1);
      await queryAt(db.url, `DELETE FROM migrations WHERE name = '${last}'`);
      const refused = await runCli(['show'], { DATABASE_URL: db.url });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`lacks migrations: ${last}.`);
      expect(await queryAt(db.url, `SELECT name FROM migrations WHERE name = '${last}'`)).toEqual([]);

      await queryAt(db.url, `INSERT INTO migrations (timestamp, name) VALUES (${last.slice(-13)}, '${last}')`);
      const shown = await runCli(['show'], { DATABASE_URL: db.url });
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ currency: 'EUR', families: [] });
    } finally {
      await db.drop();
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
});
