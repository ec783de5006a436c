import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Clock } from '@app/clock';
import { AppModule, appDatabaseOptions, configureExpress, loadConfig } from '@app/control-plane';
import { DatabaseConnection, dataSourceOptions } from '@app/database';
import { PricingService, withPriceBook, type ImportResult } from '@app/pricing';
import { createTestDatabase, type TestDatabase } from '@app/pricing/testing';
import type { Server } from 'node:http';
import { DataSource } from 'typeorm';

export interface TestApp {
  readonly app: INestApplication;
  readonly server: Server;
  /** http://127.0.0.1:<port> when started with `listen: true`. */
  readonly url: string | undefined;
  close(): Promise<void>;
}

export interface TestAppOptions {
  readonly databaseUrl: string;
  /** Environment variables, as the app would read them (DATABASE_URL is set from databaseUrl). */
  readonly env?: Record<string, string>;
  readonly clock?: Clock;
  /** Listen on a port of loopback (for tests that need a real socket). */
  readonly listen?: boolean;
  /** Wait until the database is migrated and prices are loaded (default true). */
  readonly waitUntilReady?: boolean;
  /** Where the app logs (default: errors only, to the console). */
  readonly logger?: LoggerService;
}

/** The real control-plane app, in-process, on the given database, set up as main.ts sets it up. */
export async function startTestApp(options: TestAppOptions): Promise<TestApp> {
  // Quiet request lines and no metrics port unless a test asks (test files run side by side).
  const config = loadConfig({
    LOG_LEVEL: 'error',
    METRICS_PORT: 'off',
    ...options.env,
    DATABASE_URL: options.databaseUrl,
  });
  let builder = Test.createTestingModule({ imports: [AppModule.forRoot(config, options.databaseUrl)] });
  if (options.clock) builder = builder.overrideProvider(Clock).useValue(options.clock);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication({ logger: options.logger ?? ['error'], bodyParser: false });
  configureExpress(app, config);
  await app.init();
  let url: string | undefined;
  if (options.listen) {
    await app.listen(0, '127.0.0.1');
    const address = (app.getHttpServer() as Server).address();
    if (typeof address === 'object' && address) url = `http://127.0.0.1:${address.port}`;
  }
  if (options.waitUntilReady !== false) {
    await app.get(DatabaseConnection).whenReady();
    await app.get(PricingService).refresh();
  }
  return { app, server: app.getHttpServer() as Server, url, close: () => app.close() };
}

/**
 * A DataSource of the app's settings, for writing prices and reading rows in tests; `logging: false`
 * keeps the queries a test expects to be refused out of its output.
 */
export async function openDataSource(databaseUrl: string, options: { logging?: boolean } = {}): Promise<DataSource> {
  const settings = dataSourceOptions(appDatabaseOptions(databaseUrl));
  const dataSource = new DataSource(options.logging === false ? { ...settings, logging: false } : settings);
  await dataSource.initialize();
  return dataSource;
}

/** A test database of its own (see createTestDatabase) with a price book applied. */
export async function createDatabaseWithBook(book: unknown): Promise<TestDatabase> {
  const db = await createTestDatabase();
  const dataSource = await openDataSource(db.url);
  try {
    await applyBook(dataSource, book);
  } finally {
    await dataSource.destroy();
  }
  return db;
}

/** Who the tests' own writes are recorded as (on the change log's rows, as `--actor` would). */
export const TEST_ACTOR = 'pricing-tests';

/** Applies a price book given as JSON, as the CLI would (throws when it is refused). */
export function applyBook(dataSource: DataSource, json: unknown): Promise<ImportResult> {
  return withPriceBook(dataSource, (priceBook) => priceBook.apply(json, { actor: TEST_ACTOR }));
}

/**
 * Every row of every table the price book and volumes write, as text, for comparing the
 * database before and after a refused operation.
 */
export async function dumpDatabase(dataSource: DataSource): Promise<string> {
  const tables = ['price_record', 'product_availability', 'price_change', 'price_book_version', 'volume'];
  const parts: string[] = [];
  for (const table of tables) {
    const rows: { row: string }[] = await dataSource.query(
      `SELECT row_to_json(t)::text AS row FROM ${table} t ORDER BY 1`,
    );
    parts.push(`${table}:\n${rows.map((r) => r.row).join('\n')}`);
  }
  return parts.join('\n');
}
