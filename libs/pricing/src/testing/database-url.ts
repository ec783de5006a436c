import { randomBytes } from 'node:crypto';

/** Where the global setup names this run's template database for createTestDatabase. */
export const TEMPLATE_DATABASE_VARIABLE = 'TEST_TEMPLATE_DATABASE';

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
