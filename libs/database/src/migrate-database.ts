import { Logger } from '@nestjs/common';
import { escapeIdentifier } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, migrationLimits } from './data-source-options';
import type { DatabaseModuleOptions } from './database.options';
import { migrateUnderLock, pendingMigrations, type GroupGrants } from './migrate';

const logger = new Logger('Migrations');

/** A role's name as SQL: as it is when PostgreSQL would read it so unquoted, else quoted. */
function sqlName(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : escapeIdentifier(name);
}
/** Where an operator reads what follows (docs/operations.md). */
const SEE = 'docs/operations.md, "Readers and writers"';

/**
 * The schema lacks migrations that this code needs, and the role connected may not run them (it
 * does not have the schema owner's rights, and no DATABASE_MIGRATION_URL was given): nothing was
 * tried. The migrations are a deploy step; DatabaseConnection waits for them.
 */
export class SchemaBehindError extends Error {
  constructor(
    readonly pending: readonly string[],
    readonly role: string,
    readonly owner: string | null,
  ) {
    super(
      `the database lacks migrations this code needs (${pending.join(', ')}), and the role ${role} may not run ` +
        `them (${owner === null ? 'it may not create the schema' : `the schema's owner is ${owner}`}): run ` +
        "`npm run migrate` with DATABASE_MIGRATION_URL, the owner's URL, as a deploy step",
    );
    this.name = 'SchemaBehindError';
  }
}

/** Group roles that the grants name do not exist, and the migration role may not make them: nothing was migrated. */
export class GroupRolesMissingError extends Error {
  constructor(
    readonly missing: readonly string[],
    readonly role: string,
  ) {
    super(
      `the group role${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ${missing.length > 1 ? 'do' : 'does'} ` +
        `not exist, and the migration role ${role} may not create roles (no CREATEROLE): nothing was migrated; as a ` +
        `superuser or a role with CREATEROLE, run once: ${missing.map((name) => `CREATE ROLE ${sqlName(name)} NOLOGIN;`).join(' ')} ` +
        `then migrate again (${SEE})`,
    );
    this.name = 'GroupRolesMissingError';
  }
}

/** The group roles of `options`, named as PostgreSQL spells them (the prefix applied), or none. */
export function groupGrantsOf(options: DatabaseModuleOptions): GroupGrants | undefined {
  const grants = (options.roleGrants ?? []).map((grant) => ({
    function: grant.function,
    roles: grant.roles.map((role) => `${options.rolePrefix ?? ''}${role}`),
  }));
  for (const role of grants.flatMap((grant) => grant.roles)) {
    // Lower case, as PostgreSQL folds an unquoted name: the SQL the docs give uses them as written.
    if (!/^[a-z_][a-z0-9_]*$/.test(role) || role.length > 63) {
      throw new Error(`${JSON.stringify(role)} is no group role's name (lower-case letters, digits and _, at most 63)`);
    }
  }
  return grants.some((grant) => grant.roles.length > 0) ? { grants } : undefined;
}

/**
 * Migrates the database that `dataSource` (initialized, on `options.url`) uses, under the
 * migration lock and its limits (migrateUnderLock), and returns the names of the migrations
 * applied.
 *
 * - With `options.migrationUrl`: on a connection of the migration role opened for this and closed
 *   after, which must have the schema owner's rights; it makes the group roles that do not exist
 *   when it may (else GroupRolesMissingError, before anything changes), then migrates and grants
 *   them what `options.roleGrants` say, every time, so that a grant changed by hand is set right
 *   again. `dataSource`'s role (the runtime role), when `options.url` is another URL, must belong
 *   to one of them (else nothing is migrated: it could not read what it runs on).
 * - Without: only what is pending, and only when `dataSource`'s role may migrate (it has the
 *   rights of the migrations table's owner, or the schema is empty and it may create there); a
 *   schema that is current is not even locked. A role that may not migrate a schema that lacks
 *   migrations gets SchemaBehindError. Nothing is granted.
 */
export async function migrateDatabase(dataSource: DataSource, options: DatabaseModuleOptions): Promise<string[]> {
  return (await migrateSchema(dataSource, options)).applied;
}

/** What a migration run did, and whether `dataSource`'s role itself has the schema owner's rights (one role). */
export interface MigrationRun {
  readonly applied: string[];
  /** Without a migration URL: `dataSource`'s role owns the schema (or has its rights); else false. */
  readonly ownerRights: boolean;
}

/** migrateDatabase, saying too whether the role it was given runs with the owner's rights (DatabaseConnection). */
export async function migrateSchema(dataSource: DataSource, options: DatabaseModuleOptions): Promise<MigrationRun> {
  const limits = migrationLimits(options);
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  if (options.migrationUrl === undefined) {
    const access = await schemaAccess(dataSource, table);
    if (!access.mayRead) {
      throw new Error(
        `the role ${access.role} may not read the migrations table (${table}, owned by ${access.owner}): make it a ` +
          `member of the group role it runs as (${SEE})`,
      );
    }
    const pending = await pendingMigrations(dataSource);
    if (pending.length > 0 && !access.mayMigrate) throw new SchemaBehindError(pending, access.role, access.owner);
    return {
      applied: pending.length === 0 ? [] : await migrateUnderLock(dataSource, limits),
      ownerRights: access.mayMigrate,
    };
  }
  const grants = groupGrantsOf(options);
  // The role PostgreSQL took the runtime URL as (its user, else PGUSER or the system's user name);
  // none when the one URL given is the migration role's (`npm run migrate` as a deploy step).
  const runtime =
    options.url === options.migrationUrl
      ? undefined
      : (await dataSource.query<{ runtime: string }[]>(`SELECT current_user AS runtime`))[0].runtime;
  const owner = new DataSource({
    ...dataSourceOptions({ ...options, url: options.migrationUrl, poolSize: 1 }),
    logging: false,
  });
  await owner.initialize();
  try {
    const access = await schemaAccess(owner, table);
    if (!access.mayMigrate) {
      throw new Error(
        `DATABASE_MIGRATION_URL's role ${access.role} does not own the schema (${access.owner ?? 'it may not create it'}): ` +
          'it must be the role that owns it and runs the migrations',
      );
    }
    if (grants) await ensureGroupRoles(owner, access.role, grants);
    if (runtime !== undefined) await checkRuntimeRole(owner, access.role, runtime, grants);
    return { applied: await migrateUnderLock(owner, limits, grants), ownerRights: false };
  } finally {
    await owner.destroy();
  }
}

/** What `dataSource`'s role may do with the schema, as the migrations table tells. */
async function schemaAccess(
  dataSource: DataSource,
  table: string,
): Promise<{ role: string; owner: string | null; mayMigrate: boolean; mayRead: boolean }> {
  const [access] = await dataSource.query<
    { role: string; owner: string | null; mayMigrate: boolean; mayRead: boolean }[]
  >(
    // pg_has_role(owner, 'USAGE'): the owner itself, a superuser, or a member with its rights.
    `SELECT current_user AS role, pg_get_userbyid(c.relowner) AS owner,
            CASE WHEN c.oid IS NULL THEN coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)
                 ELSE pg_has_role(c.relowner, 'USAGE') END AS "mayMigrate",
            c.oid IS NULL OR has_table_privilege(c.oid, 'SELECT') AS "mayRead"
       FROM (SELECT to_regclass($1) AS oid) t LEFT JOIN pg_class c ON c.oid = t.oid`,
    [table],
  );
  return access;
}

/**
 * The runtime role exists where the migration role connects, and belongs to a group role (else
 * the grants, which revoke whatever else it holds, would leave it nothing: a deployment from before
 * the group roles, whose runtime role held its grants itself, stops here until a DBA decides).
 * Warned about: a runtime role that is the owner, a superuser, or a member of the owner.
 */
async function checkRuntimeRole(
  owner: DataSource,
  ownerRole: string,
  runtime: string,
  grants: GroupGrants | undefined,
): Promise<void> {
  const roles = [...new Set(grants?.grants.flatMap((grant) => grant.roles) ?? [])];
  const [powers] = await owner.query<{ superuser: boolean; member: boolean; grouped: boolean }[]>(
    `SELECT rolsuper AS superuser, pg_has_role($1, current_user, 'MEMBER') AS member,
            EXISTS (SELECT FROM pg_roles g WHERE g.rolname = ANY ($2::text[]) AND pg_has_role($1, g.oid, 'USAGE')) AS grouped
       FROM pg_roles WHERE rolname = $1`,
    [runtime, roles],
  );
  if (powers === undefined) {
    throw new Error(
      `the runtime role ${runtime} does not exist where DATABASE_MIGRATION_URL connects: both URLs must name one database`,
    );
  }
  if (ownerRole === runtime) {
    logger.warn(
      `DATABASE_MIGRATION_URL connects as the runtime role ${runtime} itself: it owns the schema, whatever the group roles are granted`,
    );
    return;
  }
  if (powers.superuser || powers.member) {
    logger.warn(
      `the runtime role ${runtime} is ${powers.superuser ? 'a superuser' : `a member of ${ownerRole}`}: ` +
        `it has the owner's powers, whatever it is granted`,
    );
    return;
  }
  if (roles.length > 0 && !powers.grouped) {
    throw new Error(
      `the runtime role ${runtime} (DATABASE_URL) is a member of none of the group roles ${roles.join(', ')}, to which ` +
        `the migrations grant (whatever it holds itself is revoked): nothing was migrated; as a DBA, make it a member ` +
        `of the ones it runs as (GRANT ${roles[0]} TO ${sqlName(runtime)}; ${SEE})`,
    );
  }
}

/** Makes the group roles that do not exist, when the migration role may make roles; else GroupRolesMissingError. */
async function ensureGroupRoles(owner: DataSource, ownerRole: string, grants: GroupGrants): Promise<void> {
  const roles = [...new Set(grants.grants.flatMap((grant) => grant.roles))];
  const [{ existing, mayCreate }] = await owner.query<{ existing: string[]; mayCreate: boolean }[]>(
    `SELECT coalesce((SELECT array_agg(rolname::text) FROM pg_roles WHERE rolname = ANY ($1::text[])), '{}') AS existing,
            (SELECT rolcreaterole OR rolsuper FROM pg_roles WHERE rolname = current_user) AS "mayCreate"`,
    [roles],
  );
  const missing = roles.filter((role) => !existing.includes(role));
  if (missing.length === 0) return;
  if (!mayCreate) throw new GroupRolesMissingError(missing, ownerRole);
  for (const role of missing) {
    try {
      await owner.query(`CREATE ROLE ${escapeIdentifier(role)} NOLOGIN`);
    } catch (error) {
      // Made meanwhile by a migration of another database of this server (roles are the server's).
      if (!['42710', '23505'].includes(sqlState(error) ?? '')) throw error;
      continue;
    }
    // A warning: a role of the whole server was made, and no login belongs to it until a DBA says so.
    logger.warn(`made the group role ${role} (NOLOGIN): make each login a member of its group (${SEE})`);
  }
}

function sqlState(error: unknown): string | undefined {
  const { code, driverError } = error as { code?: string; driverError?: { code?: string } };
  return driverError?.code ?? code;
}
