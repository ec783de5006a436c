import type { DataSourceOptions } from 'typeorm';

export interface DatabaseModuleOptions {
  /** PostgreSQL URL of the one database the app uses: the runtime role's, which everything but migrations uses. */
  readonly url: string;
  /**
   * PostgreSQL URL of the role that migrates, and so owns the schema (DATABASE_MIGRATION_URL): a
   * connection of its own, opened to migrate and closed after. After migrating, it grants the
   * runtime role (`url`'s) what `runtimeGrants` say, and nothing else. Unset: `url`'s role migrates
   * and owns the schema.
   */
  readonly migrationUrl?: string;
  /**
   * SQL functions that the migrations make (owned by the migration role), each granting a runtime
   * role what it needs of one part of the schema: `f(runtime name)`, revoking first whatever else
   * that role holds there, so that calling it again changes nothing. With `migrationUrl`, each is
   * called after every migration run, under the migration lock, in one transaction with the grant
   * of SELECT on the migrations table (docs/decisions.md, "Two roles").
   */
  readonly runtimeGrants?: readonly string[];
  /**
   * Client-side limit, in seconds, of every call: a connection attempt, and each query (a
   * connection that has not answered a query within it is destroyed, never reused). Default 5.
   */
  readonly timeoutS?: number;
  /** TypeORM entities (for TypeOrmModule.forFeature). */
  readonly entities?: DataSourceOptions['entities'];
  /** Every migration of the app and its libraries, in order; run at start-up under an advisory lock. */
  readonly migrations?: DataSourceOptions['migrations'];
  /** Shown in pg_stat_activity. */
  readonly applicationName?: string;
  /** Connections in the pool (default 10); the LISTEN connection comes on top. */
  readonly poolSize?: number;
  /**
   * Limit, in seconds, of each statement of a migration (default 600), instead of `timeoutS`: a
   * migration of a large book may rightly take minutes. Waits for table locks during a migration
   * are limited by `timeoutS` (`lock_timeout`), so that reads never queue behind it for long.
   */
  readonly migrationTimeoutS?: number;
}

export const DATABASE_OPTIONS = Symbol('DATABASE_OPTIONS');
export const DEFAULT_DATABASE_TIMEOUT_S = 5;
export const DEFAULT_MIGRATION_TIMEOUT_S = 600;
