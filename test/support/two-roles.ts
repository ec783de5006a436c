import { randomBytes } from 'node:crypto';
import { adminUrl, withDatabase } from './template-database';
import { queryAt } from './sql';

/**
 * An empty database set up as docs/operations.md ("Two roles: least privilege") tells an operator
 * to: an owner role that owns it (and will own the schema once it migrates), and a runtime role
 * that may only connect. Made by the tests' admin (TEST_ADMIN_DATABASE_URL), with names of their
 * own, as roles belong to the whole server and test files run side by side.
 */
export interface TwoRoleDatabase {
  readonly name: string;
  readonly owner: string;
  readonly runtime: string;
  /** DATABASE_MIGRATION_URL: the owner's. */
  readonly ownerUrl: string;
  /** DATABASE_URL: the runtime role's. */
  readonly runtimeUrl: string;
  /** The admin's (a superuser's), on this database. */
  readonly adminUrl: string;
  /** The two URLs as the service and the CLI read them. */
  readonly env: { DATABASE_URL: string; DATABASE_MIGRATION_URL: string };
  /** Drops the database and both roles. */
  drop(): Promise<void>;
}

export async function createTwoRoleDatabase(): Promise<TwoRoleDatabase> {
  const admin = adminUrl();
  const suffix = randomBytes(4).toString('hex');
  const name = `pricing_roles_${suffix}`;
  const owner = `pricing_owner_${suffix}`;
  const runtime = `pricing_app_${suffix}`;
  const ownerPassword = randomBytes(12).toString('hex');
  const runtimePassword = randomBytes(12).toString('hex');
  await queryAt(admin, `CREATE ROLE ${owner} LOGIN PASSWORD '${ownerPassword}'`);
  await queryAt(admin, `CREATE ROLE ${runtime} LOGIN PASSWORD '${runtimePassword}'`);
  await queryAt(admin, `CREATE DATABASE ${name} OWNER ${owner}`);
  await queryAt(admin, `REVOKE ALL ON DATABASE ${name} FROM PUBLIC`);
  await queryAt(admin, `GRANT CONNECT ON DATABASE ${name} TO ${runtime}`);
  const ownerUrl = asRole(withDatabase(admin, name), owner, ownerPassword);
  const runtimeUrl = asRole(withDatabase(admin, name), runtime, runtimePassword);
  return {
    name,
    owner,
    runtime,
    ownerUrl,
    runtimeUrl,
    adminUrl: withDatabase(admin, name),
    env: { DATABASE_URL: runtimeUrl, DATABASE_MIGRATION_URL: ownerUrl },
    drop: async () => {
      await queryAt(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await queryAt(admin, `DROP ROLE IF EXISTS ${runtime}`);
      await queryAt(admin, `DROP ROLE IF EXISTS ${owner}`);
    },
  };
}

/** `url` with another user and password. */
export function asRole(url: string, role: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = role;
  parsed.password = password;
  return parsed.toString();
}
