import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { dataSourceOptions, migrationLimits } from './data-source-options';
import type { DatabaseModuleOptions } from './database.options';
import { migrateUnderLock } from './migrate';

const logger = new Logger('Migrations');

/**
 * Migrates the database that `dataSource` (initialized, the runtime role's: `options.url`) uses,
 * under the migration lock and its limits (migrateUnderLock), and returns the names of the
 * migrations applied. Without `options.migrationUrl`, on `dataSource` itself: its role owns what
 * the migrations make. With it, on a connection of the migration role opened for this and closed
 * after, which then grants the runtime role (whoever `dataSource` connects as) what
 * `options.runtimeGrants` say, every time, so that a role changed by hand is set right again.
 */
export async function migrateDatabase(dataSource: DataSource, options: DatabaseModuleOptions): Promise<string[]> {
  const limits = migrationLimits(options);
  if (options.migrationUrl === undefined) return migrateUnderLock(dataSource, limits);
  // The role PostgreSQL took the runtime URL as (its user, else PGUSER or the system's user name).
  const [{ runtime }] = await dataSource.query<{ runtime: string }[]>(`SELECT current_user AS runtime`);
  const owner = new DataSource({
    ...dataSourceOptions({ ...options, url: options.migrationUrl, poolSize: 1 }),
    logging: false,
  });
  await owner.initialize();
  try {
    const [powers] = await owner.query<{ owner: string; superuser: boolean; member: boolean }[]>(
      `SELECT current_user AS owner, rolsuper AS superuser, pg_has_role($1, current_user, 'MEMBER') AS member
         FROM pg_roles WHERE rolname = $1`,
      [runtime],
    );
    if (powers === undefined) {
      throw new Error(
        `the runtime role ${runtime} does not exist where DATABASE_MIGRATION_URL connects: both URLs must name one database`,
      );
    }
    if (powers.owner === runtime) {
      logger.warn(
        `DATABASE_MIGRATION_URL connects as the runtime role ${runtime} itself: it owns the schema, and nothing is granted`,
      );
      return await migrateUnderLock(owner, limits);
    }
    if (powers.superuser || powers.member) {
      logger.warn(
        `the runtime role ${runtime} is ${powers.superuser ? 'a superuser' : `a member of ${powers.owner}`}: ` +
          `it has the owner's powers, whatever it is granted`,
      );
    }
    return await migrateUnderLock(owner, limits, { role: runtime, functions: options.runtimeGrants ?? [] });
  } finally {
    await owner.destroy();
  }
}
