import { randomBytes } from 'node:crypto';
import { adminUrl, withDatabase } from './template-database';
import { queryAt } from './sql';

/**
 * An empty database set up as docs/operations.md ("Readers and writers") tells a DBA to: an owner
 * role that owns it (and will own the schema once it migrates), the three group roles the
 * migrations grant to, and two logins that may only connect: the writer (the CLI's, a member of
 * pricing_writer) and the reader (the service's, a member of pricing_reader and volumes_writer).
 * Made by the tests' admin (TEST_ADMIN_DATABASE_URL), every role with a name of its own, the group
 * roles' through DATABASE_ROLE_PREFIX, as roles belong to the whole server and test files run side
 * by side.
 */
export interface TwoRoleDatabase {
  readonly name: string;
  readonly owner: string;
  /** The writer login (a member of the writer group): the CLI's, and the role of tests that write. */
  readonly runtime: string;
  /** The reader login (a member of the reader group and the volumes group): the service's. */
  readonly reader: string;
  /** DATABASE_ROLE_PREFIX. */
  readonly prefix: string;
  /** The group roles, prefixed. */
  readonly groups: { readonly reader: string; readonly writer: string; readonly volumes: string };
  /** DATABASE_MIGRATION_URL: the owner's. */
  readonly ownerUrl: string;
  /** The writer login's. */
  readonly runtimeUrl: string;
  /** The reader login's. */
  readonly readerUrl: string;
  /** The admin's (a superuser's), on this database. */
  readonly adminUrl: string;
  /** What the CLI reads: the writer's URL, the owner's, and the prefix. */
  readonly env: { DATABASE_URL: string; DATABASE_MIGRATION_URL: string; DATABASE_ROLE_PREFIX: string };
  /** Drops the database and every role made for it. */
  drop(): Promise<void>;
}

export interface TwoRoleOptions {
  /** Leave the group roles to be made (by the owner, with `ownerCreatesRoles`, or nobody). */
  readonly withoutGroups?: boolean;
  /** The owner may create roles (CREATEROLE). */
  readonly ownerCreatesRoles?: boolean;
}

export async function createTwoRoleDatabase(options: TwoRoleOptions = {}): Promise<TwoRoleDatabase> {
  const admin = adminUrl();
  const suffix = randomBytes(4).toString('hex');
  const name = `pricing_roles_${suffix}`;
  const owner = `pricing_owner_${suffix}`;
  const runtime = `pricing_app_${suffix}`;
  const reader = `pricing_service_${suffix}`;
  const prefix = `t${suffix}_`;
  const groups = {
    reader: `${prefix}pricing_reader`,
    writer: `${prefix}pricing_writer`,
    volumes: `${prefix}volumes_writer`,
  };
  const passwords = { owner: secret(), runtime: secret(), reader: secret() };
  await queryAt(
    admin,
    `CREATE ROLE ${owner} LOGIN ${options.ownerCreatesRoles ? 'CREATEROLE' : ''} PASSWORD '${passwords.owner}'`,
  );
  await queryAt(admin, `CREATE ROLE ${runtime} LOGIN PASSWORD '${passwords.runtime}'`);
  await queryAt(admin, `CREATE ROLE ${reader} LOGIN PASSWORD '${passwords.reader}'`);
  if (!options.withoutGroups) await createGroups(admin, { runtime, reader, groups });
  await queryAt(admin, `CREATE DATABASE ${name} OWNER ${owner}`);
  await queryAt(admin, `REVOKE ALL ON DATABASE ${name} FROM PUBLIC`);
  await queryAt(admin, `GRANT CONNECT ON DATABASE ${name} TO ${runtime}, ${reader}`);
  const ownerUrl = asRole(withDatabase(admin, name), owner, passwords.owner);
  const runtimeUrl = asRole(withDatabase(admin, name), runtime, passwords.runtime);
  return {
    name,
    owner,
    runtime,
    reader,
    prefix,
    groups,
    ownerUrl,
    runtimeUrl,
    readerUrl: asRole(withDatabase(admin, name), reader, passwords.reader),
    adminUrl: withDatabase(admin, name),
    env: { DATABASE_URL: runtimeUrl, DATABASE_MIGRATION_URL: ownerUrl, DATABASE_ROLE_PREFIX: prefix },
    drop: async () => {
      await queryAt(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      for (const role of [runtime, reader, owner, groups.reader, groups.writer, groups.volumes]) {
        await queryAt(admin, `DROP ROLE IF EXISTS ${role}`);
      }
    },
  };
}

/** The group roles and the logins' memberships, as the SQL of docs/operations.md makes them. */
export async function createGroups(
  admin: string,
  db: Pick<TwoRoleDatabase, 'runtime' | 'reader' | 'groups'>,
): Promise<void> {
  for (const group of Object.values(db.groups)) await queryAt(admin, `CREATE ROLE ${group} NOLOGIN`);
  await queryAt(admin, `GRANT ${db.groups.writer} TO ${db.runtime}`);
  await queryAt(admin, `GRANT ${db.groups.reader}, ${db.groups.volumes} TO ${db.reader}`);
}

/** `url` with another user and password. */
export function asRole(url: string, role: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = role;
  parsed.password = password;
  return parsed.toString();
}

function secret(): string {
  return randomBytes(12).toString('hex');
}
