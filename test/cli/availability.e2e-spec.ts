import { appDatabaseOptions } from '@app/control-plane';
import { dataSourceOptions } from '@app/database';
import { withPriceBook } from '@app/pricing/cli';
import { DataSource, type MigrationInterface } from 'typeorm';
import { runCli } from '../support/cli';
import { ALL_MIGRATIONS } from '../support/contract';
import { dumpDatabase, untilPublished, useTestDatabase } from '../support/database';
import { TEST_CLOCK } from '../support/global-setup';
import { expectApplied, price, useCliDatabase } from '../support/price-book-cli';
import { queryAt } from '../support/sql';
import { useTempDir } from '../support/temp-dir';

// Availability in the log (docs/price-book-cli.md, "Availability"): the availability the first
// migration set (storage.io1 and storage.st1 off sale) is a change of the log, on a new database
// and on one migrated before (InitialAvailabilityLogged1764000012100), so that history and verify
// explain it; show and history show availability; a key of products[] that is no product is refused.

const SCHEMA_REASON =
  '"off sale since the schema was made (migration 1764000000000), logged by migration 1764000012100"';

describe('availability on a new database', () => {
  const f = useCliDatabase();

  it('is in the log: two changes by pricing-schema, which verify replays', async () => {
    const changes = await f.cli('changes');
    expect(changes.stdout.split('\n').map((line) => line.split(/ {2,}/).slice(1))).toEqual([
      ['availability', 'storage.io1', '-', 'off-sale', 'pricing-schema', SCHEMA_REASON],
      ['availability', 'storage.st1', '-', 'off-sale', 'pricing-schema', SCHEMA_REASON],
      [],
    ]);
    expect((await f.cli('verify')).stdout).toMatch(/^2 entries, chain head [0-9a-f]{64}\n$/);
  });

  it('history says a product is off sale, since when and by whom, in every scope', async () => {
    expectApplied(await f.import({ prices: [price('storage.io1', '0.1250', { valid_from: '2026-01-01T00:00:00Z' })] }));
    const history = await f.cli('history', 'storage.io1');
    const lines = history.stdout.split('\n');
    expect(lines[2]).toBe('availability: off sale (ordering it fails with PRODUCT_UNAVAILABLE)');
    expect(lines.slice(4, -1).map((line) => line.trim().split(/ {2,}/).slice(1, 3))).toEqual([
      ['off sale', 'the product, in every scope'],
      ['set', '0.1250 per 730 gib_hours from 2026-01-01T00:00:00Z'],
    ]);
    const organization = await f.cli('history', 'storage.io1', '--organization', 'org_1', '--json');
    expect(JSON.parse(organization.stdout)).toMatchObject({
      on_sale: false,
      records: [],
      changes: [{ change: 'availability', on_sale: false, actor: 'pricing-schema' }],
    });
    // Put on sale: the change is the product's, and show no longer names it.
    expectApplied(await f.import({ products: [{ product_key: 'storage.io1', on_sale: true }] }));
    const after = (await f.cli('history', 'storage.io1')).stdout;
    expect(after).toContain('availability: on sale\n');
    expect(after).toMatch(/Z {2}on sale +the product, in every scope +\S/);
    expect((await f.cli('show')).stderr).toBe(
      'not on sale (ordering them fails with PRODUCT_UNAVAILABLE): storage.st1\n',
    );
    expect((await f.cli('verify')).code).toBe(0);
  });

  it('refuses a key of products[] that is no product, as prices[] refuses an unknown key: exit 3, nothing written', async () => {
    const typo = await f.bookFile({ products: [{ product_key: 'compute.g2.44', on_sale: false }] });
    for (const args of [
      ['import', typo],
      ['import', '--dry-run', typo],
    ]) {
      await f.expectRefused(
        args,
        'products[0].product_key: "compute.g2.44" is no product: it has no price, recorded or in this book, and no availability',
      );
    }
    // A product priced by the same book, or recorded, is one.
    const priced = {
      products: [{ product_key: 'compute.g2.44', on_sale: false }],
      prices: [price('compute.g2.44', '1.00')],
    };
    expectApplied(await f.import(priced));
    expectApplied(await f.import({ products: [{ product_key: 'compute.g2.44', on_sale: true }] }));
  });
});

describe('availability on a database migrated before it was logged', () => {
  const databases = useTestDatabase({ beforeAll: false });
  const temp = useTempDir('availability');

  /** The app's migrations before `name`, in the order TypeORM runs them. */
  function migrationsBefore(name: string): (new () => MigrationInterface)[] {
    const all = (appDatabaseOptions('postgres://unused').migrations ?? []) as (new () => MigrationInterface)[];
    return [...all]
      .sort((a, b) => Number(a.name.slice(-13)) - Number(b.name.slice(-13)))
      .slice(0, ALL_MIGRATIONS.indexOf(name));
  }

  it('logs once what the first migration set, only for the products whose availability the log does not say; verify passes after', async () => {
    const db = await databases.create({ migrated: false });
    const options = appDatabaseOptions(db.url);
    const older = new DataSource({
      ...dataSourceOptions({ ...options, migrations: migrationsBefore('InitialAvailabilityLogged1764000012100') }),
      logging: false,
    });
    await older.initialize();
    try {
      await older.runMigrations();
      await older.query(TEST_CLOCK);
      // A database in use: a price, and storage.io1 put on sale by an import (a logged change).
      const book = {
        products: [{ product_key: 'storage.io1', on_sale: true }],
        prices: [price('storage.gp1', '0.0480')],
      };
      await untilPublished(
        (await withPriceBook(older, (priceBook) => priceBook.apply(book, { actor: 'ana' }))).instant,
      );
      // The commands that do not migrate stop on the pending migration; nothing is written.
      const env = { DATABASE_URL: db.url };
      const dump = await dumpDatabase(older);
      const planned = await runCli(['import', '--dry-run', await temp.write('book.json', book)], env);
      expect({ code: planned.code, stderr: planned.stderr }).toEqual({
        code: 8,
        stderr: expect.stringContaining('lacks migrations: InitialAvailabilityLogged1764000012100, ') as string,
      });
      expect((await runCli(['verify'], env)).code).toBe(8);
      expect(await dumpDatabase(older)).toBe(dump);
    } finally {
      await older.destroy();
    }
    try {
      const env = { DATABASE_URL: db.url };
      expect((await runCli(['migrate'], env)).stdout).toMatch(
        /^database migrated: InitialAvailabilityLogged1764000012100(, \w+)*\n$/,
      );
      const log = await queryAt<{ product_key: string; actor: string; on_sale: boolean }>(
        db.url,
        `SELECT product_key, actor, on_sale FROM price_change WHERE change = 'availability' ORDER BY id`,
      );
      expect(log).toEqual([
        { product_key: 'storage.io1', actor: 'ana', on_sale: true }, // logged by its import: left as it is
        { product_key: 'storage.st1', actor: 'pricing-schema', on_sale: false },
      ]);
      expect((await runCli(['verify'], env)).stdout).toMatch(/^3 entries, chain head [0-9a-f]{64}\n$/);
      // Once only: migrating again logs nothing more.
      expect((await runCli(['migrate'], env)).stdout).toBe('database migrated: nothing to do\n');
      expect(await queryAt(db.url, `SELECT count(*)::int AS n FROM price_change`)).toEqual([{ n: 3 }]);
    } finally {
      await db.close();
    }
  });
});
