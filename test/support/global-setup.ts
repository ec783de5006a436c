import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../apps/control-plane/src/database/embedded-postgres';
import { runCli } from './cli';
import { TEMPLATE_DATABASE, withDatabase } from './database-url';

/**
 * One PostgreSQL for the whole run: DATABASE_URL when set, else a throwaway embedded one.
 * It is migrated once, into a template database each test file copies.
 */
export default async function globalSetup(): Promise<void> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dir = await mkdtemp(join(tmpdir(), 'pricing-test-pg-'));
    const embedded = await startEmbeddedPostgres(dir);
    (globalThis as Record<string, unknown>).__EMBEDDED_PG__ = { embedded, dir };
    adminUrl = embedded.url;
  }
  process.env.TEST_ADMIN_DATABASE_URL = adminUrl;

  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();

  // Migrated by the built CLI (`npm test` builds first), as an operator would.
  const migrated = await runCli(['migrate'], { DATABASE_URL: withDatabase(adminUrl, TEMPLATE_DATABASE) });
  if (migrated.code !== 0) throw new Error(`migrating the template failed: ${migrated.stderr}`);
}
