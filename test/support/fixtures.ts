import { createTestDatabase, type TestDatabase } from '@app/pricing/testing';
import type { DataSource } from 'typeorm';
export { useTempDir } from './temp-dir';
import { applyBook, openDataSource, startTestApp, type TestApp, type TestAppOptions } from './test-app';

/** What a file's `beforeAll` makes, read once it has run. */
export interface TestDatabaseFixture {
  readonly db: TestDatabase;
  readonly dataSource: DataSource;
  /** The app on the database, when asked for with `app`. */
  readonly app: TestApp;
}

export interface TestDatabaseOptions {
  /** A price book written before the tests, or a function that reads it. */
  readonly book?: unknown;
  /** Log the DataSource's failed queries as the app does (default true); false for tests of refusals. */
  readonly logging?: boolean;
  /** Start the app on the database too (closed before the database is dropped). */
  readonly app?: Omit<TestAppOptions, 'databaseUrl'>;
}

/**
 * A test database of the file's own (copied from the migrated template) and a DataSource on it,
 * made in `beforeAll` and dropped in `afterAll`; optionally a book in it and the app on it.
 */
export function useTestDatabase(options: TestDatabaseOptions = {}): TestDatabaseFixture {
  let db: TestDatabase | undefined;
  let dataSource: DataSource | undefined;
  let app: TestApp | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await openDataSource(db.url, { logging: options.logging });
    const { book } = options;
    if (book !== undefined) {
      await applyBook(dataSource, typeof book === 'function' ? await (book as () => Promise<unknown>)() : book);
    }
    if (options.app) app = await startTestApp({ ...options.app, databaseUrl: db.url });
  });
  afterAll(async () => {
    await app?.close();
    if (dataSource?.isInitialized) await dataSource.destroy();
    await db?.drop();
  });
  const made = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is made in beforeAll`);
    return value;
  };
  return {
    get db() {
      return made(db, 'the test database');
    },
    get dataSource() {
      return made(dataSource, 'the DataSource');
    },
    get app() {
      return made(app, options.app ? 'the app' : 'no app was asked for; the app');
    },
  };
}

/** What useTestResources gives a describe. */
export interface TestResources {
  /** A test database of its own and a DataSource on it, with `book` applied if given. */
  database(book?: unknown): Promise<{ db: TestDatabase; dataSource: DataSource }>;
  /** The app, listening on loopback unless told otherwise. */
  start(options: TestAppOptions): Promise<TestApp>;
  /** Closes an app before the describe ends. */
  stop(app: TestApp): Promise<void>;
}

/** Databases and apps a describe makes as it goes, all closed after its tests (apps first). */
export function useTestResources(): TestResources {
  const databases: TestDatabase[] = [];
  const dataSources: DataSource[] = [];
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps.splice(0)) await app.close();
    for (const dataSource of dataSources.splice(0)) await dataSource.destroy();
    for (const db of databases.splice(0)) await db.drop();
  });
  return {
    async database(book) {
      const db = await createTestDatabase();
      databases.push(db);
      const dataSource = await openDataSource(db.url);
      dataSources.push(dataSource);
      if (book !== undefined) await applyBook(dataSource, book);
      return { db, dataSource };
    },
    async start(options) {
      const app = await startTestApp({ listen: true, ...options });
      apps.push(app);
      return app;
    },
    async stop(app) {
      apps.splice(apps.indexOf(app), 1);
      await app.close();
    },
  };
}
