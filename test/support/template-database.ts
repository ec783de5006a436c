import { randomBytes } from 'node:crypto';
import { queryAt } from './sql';

// The run's template database, which the global setup migrates and each test database copies
// (database.ts). No @app import: the global setup loads this outside Jest's module mapping.

/** Where the global setup leaves the server's superuser URL, for making and dropping databases. */
export const ADMIN_DATABASE_VARIABLE = 'TEST_ADMIN_DATABASE_URL';
/** Where the global setup leaves the name of this run's template database. */
export const TEMPLATE_DATABASE_VARIABLE = 'TEST_TEMPLATE_DATABASE';
/**
 * Where the global setup says how the server copies the template: `FILE_COPY` where it has a
 * choice (PostgreSQL 15 and later), as a small database copies faster file by file than through
 * the WAL (the default); unset on an older server.
 */
export const COPY_STRATEGY_VARIABLE = 'TEST_TEMPLATE_STRATEGY';

/**
 * A template database's name of its own for one test run: two runs sharing one PostgreSQL
 * server (two checkouts, CI jobs) never drop each other's template.
 */
export function newTemplateDatabaseName(): string {
  return `pricing_test_template_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** The same server, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** The superuser's URL the global setup left (a test database's server). */
export function adminUrl(): string {
  const url = process.env[ADMIN_DATABASE_VARIABLE];
  if (!url) throw new Error(`${ADMIN_DATABASE_VARIABLE} is set by the global setup (test/support/global-setup.ts)`);
  return url;
}

/**
 * A database of its own on the tests' server: a copy of the migrated template (fast), or empty
 * (`migrated: false`), for tests of migrating; its URL, and how to drop it.
 */
export async function newDatabase(migrated: boolean): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = adminUrl();
  const template = process.env[TEMPLATE_DATABASE_VARIABLE];
  if (migrated && !template) throw new Error(`${TEMPLATE_DATABASE_VARIABLE} is set by the global setup`);
  const name = `pricing_test_${randomBytes(6).toString('hex')}`;
  const strategy = process.env[COPY_STRATEGY_VARIABLE];
  const copy = `TEMPLATE ${template}${strategy ? ` STRATEGY ${strategy}` : ''}`;
  await queryAt(admin, migrated ? `CREATE DATABASE ${name} ${copy}` : `CREATE DATABASE ${name}`);
  return {
    url: withDatabase(admin, name),
    drop: async () => void (await queryAt(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}
