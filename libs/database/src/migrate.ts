import { DatabaseError, escapeIdentifier } from 'pg';
import { MigrationExecutor, QueryFailedError, type DataSource, type QueryRunner } from 'typeorm';
import { DatabaseTimeoutError, type TimedClient } from './timed-client';

/** Held while migrating, so that instances starting together migrate one at a time. */
export const MIGRATION_LOCK = 4_705_212_000;
/** Our client-side deadline comes this long after PostgreSQL's own, so that its clearer error wins. */
const CLIENT_GRACE_MS = 1_000;

/**
 * Limits of a migration, apart from the database timeout of every other query: a migration of a
 * large book may rightly run for minutes (DatabaseModuleOptions.migrationTimeoutS), but it never
 * waits long for a lock, as every read of the tables it alters would queue behind it.
 */
export interface MigrationLimits {
  /** Each statement of a migration, and the wait for another instance's migration. */
  readonly timeoutMs: number;
  /** The wait for a lock on a table (`lock_timeout`); the attempt fails and is tried again later. */
  readonly lockTimeoutMs: number;
}

/**
 * A statement of a migration that did not finish within its time limit. Trying it again would run
 * the same work for as long again, holding its tables each time: whoever migrates stops instead
 * (README, "Security").
 */
export class MigrationTimeoutError extends Error {
  constructor(
    readonly timeoutMs: number,
    override readonly cause: unknown,
  ) {
    super(
      `a migration statement did not finish within ${timeoutMs / 1000} s (DATABASE_MIGRATION_TIMEOUT_S): ` +
        `${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'MigrationTimeoutError';
  }
}

/**
 * Another instance held the migration lock for longer than the time limit: its migration is long,
 * not ours, so this is no MigrationTimeoutError; the caller tries again (DatabaseConnection retries).
 */
export class MigrationLockBusyError extends Error {
  constructor(
    readonly timeoutMs: number,
    override readonly cause: unknown,
  ) {
    super(`another instance was still migrating after ${timeoutMs / 1000} s (DATABASE_MIGRATION_TIMEOUT_S)`);
    this.name = 'MigrationLockBusyError';
  }
}

/**
 * What the migration role grants once it has migrated: each function of the migrations
 * (DatabaseModuleOptions.roleGrants), called with its group roles, named as PostgreSQL spells
 * them (the prefix applied); every one of those roles may read the migrations table.
 */
export interface GroupGrants {
  readonly grants: readonly { readonly function: string; readonly roles: readonly string[] }[];
}

/**
 * Runs the pending migrations, each in its own transaction, on one connection holding a session
 * advisory lock, with the time limits of `limits` on that connection (set back before it returns
 * to the pool). With `grant`, the group roles are then granted what they need, still under the
 * lock (instances starting together never grant at once: concurrent GRANTs of one table fail).
 */
export async function migrateUnderLock(
  dataSource: DataSource,
  limits: MigrationLimits,
  grant?: GroupGrants,
): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  const client = (await runner.connect()) as TimedClient;
  const poolDeadlineMs = client.deadlineMs;
  client.deadlineMs = limits.timeoutMs + CLIENT_GRACE_MS;
  let locked = false;
  try {
    await runner.query(`SET statement_timeout = ${Math.round(limits.timeoutMs)}`);
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    locked = true;
    // Set once the advisory lock is held: waiting for another instance's migration is not a table lock.
    await runner.query(`SET lock_timeout = ${Math.round(limits.lockTimeoutMs)}`);
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'each';
    const applied = await executor.executePendingMigrations();
    if (grant) await grantGroupRoles(runner, dataSource.options.migrationsTableName ?? 'migrations', grant);
    return applied.map((migration) => migration.name);
  } catch (error) {
    if (!isTimeLimit(error)) throw error;
    throw locked
      ? new MigrationTimeoutError(limits.timeoutMs, error)
      : new MigrationLockBusyError(limits.timeoutMs, error);
  } finally {
    if (locked) await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.query('RESET statement_timeout; RESET lock_timeout').catch(() => undefined);
    client.deadlineMs = poolDeadlineMs;
    await runner.release();
  }
}

/**
 * One transaction, so that no group role ever sees a moment without its privileges (each grant
 * function revokes before it grants): on the migrations table, whatever any role but its owner
 * holds is revoked and each group role may SELECT it (the service and the CLI check for pending
 * migrations), then each grant function.
 */
async function grantGroupRoles(runner: QueryRunner, migrationsTable: string, grant: GroupGrants): Promise<void> {
  const table = escapeIdentifier(migrationsTable);
  await runner.startTransaction();
  try {
    const held = (await runner.query(
      `SELECT DISTINCT CASE x.grantee WHEN 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END AS grantee
         FROM pg_class c, aclexplode(c.relacl) x WHERE c.oid = $1::regclass AND x.grantee <> c.relowner`,
      [migrationsTable],
    )) as { grantee: string }[];
    for (const { grantee } of held) await runner.query(`REVOKE ALL ON ${table} FROM ${grantee}`);
    const roles = [...new Set(grant.grants.flatMap((g) => g.roles))];
    if (roles.length > 0) await runner.query(`GRANT SELECT ON ${table} TO ${roles.map(escapeIdentifier).join(', ')}`);
    for (const { function: name, roles: args } of grant.grants) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`${JSON.stringify(name)} is no grant function's name`);
      await runner.query(`SELECT ${name}(${args.map((_, i) => `$${i + 1}::name`).join(', ')})`, [...args]);
    }
    await runner.commitTransaction();
  } catch (error) {
    await runner.rollbackTransaction().catch(() => undefined);
    throw error;
  }
}

/** PostgreSQL cancelled a statement at statement_timeout (57014), or our deadline dropped the connection. */
function isTimeLimit(error: unknown): boolean {
  const cause: unknown = error instanceof QueryFailedError ? error.driverError : error;
  return cause instanceof DatabaseTimeoutError || (cause instanceof DatabaseError && cause.code === '57014');
}

/** The names of the migrations the database still lacks, in the order they would run (TypeORM's: by timestamp). */
export async function pendingMigrations(dataSource: DataSource): Promise<string[]> {
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  const exists: { found: boolean }[] = await dataSource.query(`SELECT to_regclass($1) IS NOT NULL AS found`, [table]);
  const applied = new Set<string>();
  if (exists[0].found) {
    const rows: { name: string }[] = await dataSource.query(`SELECT name FROM "${table}"`);
    for (const row of rows) applied.add(row.name);
  }
  return dataSource.migrations
    .map((migration) => migration.name ?? migration.constructor.name)
    .filter((name) => !applied.has(name))
    .sort((a, b) => Number(a.slice(-13)) - Number(b.slice(-13)));
}
