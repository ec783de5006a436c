import { rm } from 'node:fs/promises';
// eslint-disable-next-line no-restricted-imports -- loaded outside Jest's module mapping, as the global setup
import type { EmbeddedDatabase } from '../../apps/control-plane/src/database/embedded-postgres';
import { queryAt } from './sql';
import { ADMIN_DATABASE_VARIABLE, TEMPLATE_DATABASE_VARIABLE } from './template-database';

/** What the global setup started: an embedded PostgreSQL in `dir`, or nothing (DATABASE_URL). */
export type StartedDatabase = { embedded?: EmbeddedDatabase; dir: string } | undefined;

/** Jest's global teardown (Jest passes its configurations, which are not needed here). */
export default function globalTeardown(): Promise<void> {
  return stopTestDatabase((globalThis as Record<string, unknown>).__EMBEDDED_PG__ as StartedDatabase);
}

/**
 * Stops and removes the embedded PostgreSQL the global setup started; on a server of the
 * caller's (DATABASE_URL), drops this run's template database (the test files drop their own).
 */
export async function stopTestDatabase(started: StartedDatabase): Promise<void> {
  if (started) {
    await started.embedded?.stop();
    await rm(started.dir, { recursive: true, force: true });
    return;
  }
  const adminUrl = process.env[ADMIN_DATABASE_VARIABLE];
  const template = process.env[TEMPLATE_DATABASE_VARIABLE];
  if (adminUrl && template) await queryAt(adminUrl, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
}
