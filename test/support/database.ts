import { appDatabaseOptions } from '@app/control-plane';
import { dataSourceOptions } from '@app/database';
import { type ImportResult } from '@app/pricing';
import { withPriceBook } from '@app/pricing/cli';
import { DataSource } from 'typeorm';
import { newDatabase } from './template-database';
import { startTestApp, type TestApp, type TestAppOptions } from './test-app';

// The one way the tests get a database: useTestDatabase() in a describe (or a file). Each test
// database is a copy of the run's template, which the global setup migrated (fast, and as an
// operator's `npm run migrate` would), on the tests' PostgreSQL.

export interface TestDatabaseOptions {
  /** A price book applied before the tests (applyBook), or a function that reads it. */
  readonly book?: unknown;
  /** Log the DataSource's failed queries as the app does (default true); false for tests of refusals. */
  readonly logging?: boolean;
  /** Start the app on the database too (closed before the database is dropped). */
  readonly app?: Omit<TestAppOptions, 'databaseUrl'>;
  /** false: an empty database, not even migrated, and no DataSource on it (tests of migrating); default true. */
  readonly migrated?: boolean;
}

/** A database of its own: its URL, a DataSource on it with the app's settings, and the app on it when asked for. */
export interface TestDatabase {
  readonly url: string;
  readonly dataSource: DataSource;
  /** The app, when asked for with `app`. */
  readonly app: TestApp;
  /** Closes the app and the DataSource and drops the database, before the describe's end. */
  close(): Promise<void>;
}

/** useTestDatabase(): the describe's database, and more as its tests go. */
export interface TestDatabaseFixture extends TestDatabase {
  /** Another database of its own, made now (in a test or a hook), closed with the describe's. */
  create(options?: TestDatabaseOptions): Promise<TestDatabase>;
  /** The app on a database (or any URL), listening on loopback unless told otherwise, closed with the describe's. */
  start(options: TestAppOptions): Promise<TestApp>;
  /** Closes an app before then. */
  stop(app: TestApp): Promise<void>;
}

/**
 * The test database of the enclosing describe (or file): made in its `beforeAll` with `options`
 * (unless `beforeAll: false`, for a describe whose tests make their own), closed in its `afterAll`
 * together with what its tests made with `create()` and `start()`, apps first. A nested
 * describe's `afterAll` (a module or a transaction to close) runs before the file's database is
 * dropped.
 */
export function useTestDatabase(options: TestDatabaseOptions & { beforeAll?: false } = {}): TestDatabaseFixture {
  const apps: TestApp[] = [];
  const databases: TestDatabase[] = [];
  let made: TestDatabase | undefined;
  const create = async (more: TestDatabaseOptions = {}): Promise<TestDatabase> => {
    const database = await createTestDatabase(more);
    databases.push(database);
    return database;
  };
  if (options.beforeAll !== false) {
    beforeAll(async () => {
      made = await create(options);
    });
  }
  afterAll(async () => {
    for (const app of apps.splice(0)) await app.close();
    for (const database of databases.splice(0).reverse()) await database.close();
  });
  const the = (): TestDatabase => {
    if (!made) {
      throw new Error(
        options.beforeAll === false
          ? 'this describe has no database of its own'
          : 'the test database is made in beforeAll',
      );
    }
    return made;
  };
  return {
    get url() {
      return the().url;
    },
    get dataSource() {
      return the().dataSource;
    },
    get app() {
      return the().app;
    },
    close: () => the().close(),
    create,
    async start(appOptions) {
      const app = await startTestApp({ listen: true, ...appOptions });
      apps.push(app);
      return app;
    },
    async stop(app) {
      const index = apps.indexOf(app);
      if (index >= 0) apps.splice(index, 1);
      await app.close();
    },
  };
}

async function createTestDatabase(options: TestDatabaseOptions): Promise<TestDatabase> {
  const { book, migrated = true } = options;
  if (!migrated && (book !== undefined || options.app)) throw new Error('a book or an app needs a migrated database');
  const database = await newDatabase(migrated);
  let dataSource: DataSource | undefined;
  let app: TestApp | undefined;
  let closed: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    await app?.close();
    if (dataSource?.isInitialized) await dataSource.destroy();
    await database.drop();
  };
  try {
    if (migrated) dataSource = await openDataSource(database.url, { logging: options.logging });
    if (dataSource && book !== undefined) {
      await applyBook(dataSource, typeof book === 'function' ? await (book as () => Promise<unknown>)() : book);
    }
    if (options.app) app = await startTestApp({ ...options.app, databaseUrl: database.url });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url: database.url,
    get dataSource() {
      if (!dataSource) throw new Error('an empty database (migrated: false) has no DataSource');
      return dataSource;
    },
    get app() {
      if (!app) throw new Error('no app was asked for (useTestDatabase({ app }))');
      return app;
    },
    close: () => (closed ??= close()),
  };
}

/**
 * A DataSource of the app's settings on `databaseUrl`, for writing prices and reading rows in
 * tests; `logging: false` keeps the queries a test expects to be refused out of its output.
 */
export async function openDataSource(databaseUrl: string, options: { logging?: boolean } = {}): Promise<DataSource> {
  const settings = dataSourceOptions(appDatabaseOptions(databaseUrl));
  const dataSource = new DataSource(options.logging === false ? { ...settings, logging: false } : settings);
  await dataSource.initialize();
  return dataSource;
}

/** Who the tests' own writes are recorded as (on the change log's rows, as `--actor` would). */
export const TEST_ACTOR = 'pricing-tests';

/**
 * Applies a price book given as JSON, as the CLI would (throws when it is refused), and resolves
 * once it took effect: at its publication instant (docs/decisions.md, "One clock").
 */
export async function applyBook(dataSource: DataSource, json: unknown): Promise<ImportResult> {
  const result = await withPriceBook(dataSource, (priceBook) => priceBook.apply(json, { actor: TEST_ACTOR }));
  await untilPublished(result.instant);
  return result;
}

/** Resolves once every write committed to `dataSource`'s database took effect (a write by hand, in SQL). */
export async function untilWritesPublished(dataSource: DataSource): Promise<void> {
  const [{ at }] = await dataSource.query<{ at: Date | null }[]>(
    `SELECT max(published_at) AS at FROM price_book_write`,
  );
  if (at) await untilPublished(at);
}

/** Resolves once the real clock has passed `instant`: a write is served from its publication instant on. */
export async function untilPublished(instant: Date): Promise<void> {
  const wait = instant.getTime() + 1 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/** Withdraws the list price of `productKey` scheduled from `validFrom` (throws when refused), once in effect. */
export async function withdrawScheduledListPrice(dataSource: DataSource, productKey: string, validFrom: string) {
  const result = await withPriceBook(dataSource, (priceBook) =>
    priceBook.withdraw({ productKey, organizationId: null, validFrom: Date.parse(validFrom) }),
  );
  await untilPublished(result.instant);
  return result;
}

/**
 * Every row of every table the price book and volumes write, as text, for comparing the
 * database before and after a refused operation.
 */
export async function dumpDatabase(dataSource: DataSource): Promise<string> {
  const tables = [
    'price_record',
    'product_availability',
    'price_change',
    'price_book_version',
    'price_book_write',
    'volume',
  ];
  const parts: string[] = [];
  for (const table of tables) {
    const rows: { row: string }[] = await dataSource.query(
      `SELECT row_to_json(t)::text AS row FROM ${table} t ORDER BY 1`,
    );
    parts.push(`${table}:\n${rows.map((r) => r.row).join('\n')}`);
  }
  return parts.join('\n');
}
