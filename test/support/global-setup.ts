import { DataSource } from 'typeorm';
import type * as Database from '@app/database';
// Jest loads the global setup outside its module mapping: @app/... resolves here through
// typescript.cjs, while the migration runs.
/* eslint-disable no-restricted-imports */
import type * as AppDatabase from '../../apps/control-plane/src/database/app-database';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../apps/control-plane/src/database/embedded-postgres';
/* eslint-enable no-restricted-imports */
import { stopTestDatabase } from './global-teardown';
import { passableTempDir } from './temp-dir';
import { queryAt } from './sql';
import {
  ADMIN_DATABASE_VARIABLE,
  COPY_STRATEGY_VARIABLE,
  newTemplateDatabaseName,
  TEMPLATE_DATABASE_VARIABLE,
  withDatabase,
} from './template-database';
import { resolveAliases } from './typescript.cjs';

/** The clock's settings of the tests' databases (price_book_clock). */
export const TEST_CLOCK = `UPDATE price_book_clock SET publication_margin = interval '0', default_delay = interval '600 milliseconds'`;

/**
 * One PostgreSQL for the whole run: DATABASE_URL when set, else a throwaway embedded one. It is
 * migrated once, as `npm run migrate` migrates, into a template database that each test database
 * copies (database.ts). Nothing is built: a single spec runs from a fresh clone with
 * `npx jest test/<file>`. When anything here fails, what it started is stopped and removed again.
 */
export default async function globalSetup(): Promise<void> {
  let adminUrl = process.env.DATABASE_URL;
  let started: { embedded?: EmbeddedDatabase; dir: string } | undefined;
  try {
    if (!adminUrl) {
      const dir = await passableTempDir('pricing-test-pg');
      started = { dir };
      started.embedded = await startEmbeddedPostgres(dir);
      adminUrl = started.embedded.superuserUrl;
    }
    process.env[ADMIN_DATABASE_VARIABLE] = adminUrl;
    const template = newTemplateDatabaseName();
    process.env[TEMPLATE_DATABASE_VARIABLE] = template;
    await queryAt(adminUrl, `CREATE DATABASE ${template}`);
    await migrate(withDatabase(adminUrl, template));
    // A write takes effect 0.6 s after it begins, not a second (docs/decisions.md, "One
    // clock"): the suite does not wait a second per write. test/one-clock.e2e-spec.ts runs on the defaults.
    await queryAt(withDatabase(adminUrl, template), TEST_CLOCK);
    const [{ version }] = await queryAt<{ version: string }>(
      adminUrl,
      "SELECT current_setting('server_version_num') AS version",
    );
    if (Number(version) >= 150_000) process.env[COPY_STRATEGY_VARIABLE] = 'FILE_COPY';
  } catch (error) {
    await stopTestDatabase(started);
    throw error;
  }
  (globalThis as Record<string, unknown>).__EMBEDDED_PG__ = started;
}

/** Runs every migration of the app on `url`, as the CLI's `migrate` does (apps/control-plane/src/price-book-cli.ts). */
async function migrate(url: string): Promise<void> {
  const undo = resolveAliases();
  try {
    /* eslint-disable @typescript-eslint/no-require-imports -- loaded once the aliases resolve */
    const { appDatabaseOptions } = require('../../apps/control-plane/src/database/app-database') as typeof AppDatabase;
    const { dataSourceOptions, migrateDatabase } = require('@app/database') as typeof Database;
    /* eslint-enable @typescript-eslint/no-require-imports */
    const options = appDatabaseOptions(url);
    const dataSource = new DataSource({ ...dataSourceOptions(options), logging: false });
    await dataSource.initialize();
    try {
      await migrateDatabase(dataSource, options);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    undo();
  }
}
