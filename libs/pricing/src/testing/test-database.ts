import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { TEMPLATE_DATABASE_VARIABLE, withDatabase } from './database-url';

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** A migrated database of its own for a test file, copied from the template (fast). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL;
  const template = process.env[TEMPLATE_DATABASE_VARIABLE];
  if (!adminUrl || !template) {
    throw new Error(`TEST_ADMIN_DATABASE_URL and ${TEMPLATE_DATABASE_VARIABLE} are set by the global setup`);
  }
  const name = `pricing_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${template}`);
  return {
    url: withDatabase(adminUrl, name),
    drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
