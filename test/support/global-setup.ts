import { execFileSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
// Jest loads the global setup outside its module mapping: no @app/... entry points here.
/* eslint-disable no-restricted-imports */
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../apps/control-plane/src/database/embedded-postgres';
import {
  newTemplateDatabaseName,
  TEMPLATE_DATABASE_VARIABLE,
  withDatabase,
} from '../../libs/pricing/src/testing/database-url';
/* eslint-enable no-restricted-imports */
import { runBuiltCli } from './built-cli';
import { stopTestDatabase } from './global-teardown';

const ROOT = resolve(__dirname, '../..');

/**
 * One PostgreSQL for the whole run: DATABASE_URL when set, else a throwaway embedded one.
 * It is migrated once, by the built CLI as an operator would, into a template database that
 * each test file copies. The app and its CLI are built first (a second or two with swc), so a
 * single spec runs from a fresh clone with `npx jest test/<file>`. When anything here fails,
 * what it started is stopped and removed again.
 */
export default async function globalSetup(): Promise<void> {
  execFileSync(process.execPath, [join(ROOT, 'node_modules/@nestjs/cli/bin/nest.js'), 'build'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let adminUrl = process.env.DATABASE_URL;
  let started: { embedded?: EmbeddedDatabase; dir: string } | undefined;
  try {
    if (!adminUrl) {
      const dir = await mkdtemp(join(tmpdir(), 'pricing-test-pg-'));
      started = { dir };
      started.embedded = await startEmbeddedPostgres(dir);
      adminUrl = started.embedded.superuserUrl;
    }
    process.env.TEST_ADMIN_DATABASE_URL = adminUrl;
    const template = newTemplateDatabaseName();
    process.env[TEMPLATE_DATABASE_VARIABLE] = template;

    const admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${template}`);
    await admin.end();

    const migrated = await runBuiltCli(['migrate'], { DATABASE_URL: withDatabase(adminUrl, template) });
    if (migrated.code !== 0) throw new Error(`migrating the template failed: ${migrated.stderr}`);
  } catch (error) {
    await stopTestDatabase(started);
    throw error;
  }
  (globalThis as Record<string, unknown>).__EMBEDDED_PG__ = started;
}
