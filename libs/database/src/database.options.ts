import type { DataSourceOptions } from 'typeorm';

export interface DatabaseModuleOptions {
  /** PostgreSQL URL of the one database the app uses: the runtime role's, which everything but migrations uses. */
  readonly url: string;
  /**
   * PostgreSQL URL of the role that migrates, and so owns the schema (DATABASE_MIGRATION_URL): a
   * connection of its own, opened to migrate and closed after. After migrating, it grants the group
   * roles of `roleGrants` what their functions say, and nothing else; `url`'s role runs the app as
   * a member of one. Unset: `url`'s role migrates only when it may (it has the schema owner's
   * rights), and grants nothing (migrateDatabase).
   */
  readonly migrationUrl?: string;
  /**
   * SQL functions that the migrations make (owned by the migration role), each granting group roles
   * what they need of one part of the schema: `f(role, ...)`, called with `roles` in order (each
   * prefixed with `rolePrefix`), revoking first whatever any other role holds there, so that calling
   * it again changes nothing. With `migrationUrl`, each is called after every migration run, under
   * the migration lock, in one transaction with the grant of SELECT on the migrations table to every
   * one of those roles; a role that does not exist is made first when the migration role may make
   * roles, else the run stops, naming the SQL a DBA runs (docs/decisions.md, "Readers and writers").
   */
  readonly roleGrants?: readonly RoleGrant[];
  /**
   * Put before the names of `roleGrants`' roles (DATABASE_ROLE_PREFIX): roles belong to the whole
   * server, so databases of one server that must not share their readers and writers use prefixes
   * of their own. Lower-case letters, digits and `_`; default none.
   */
  readonly rolePrefix?: string;
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

/** One grant function of the migrations and the group roles it grants, in its arguments' order. */
export interface RoleGrant {
  readonly function: string;
  readonly roles: readonly string[];
}

export const DATABASE_OPTIONS = Symbol('DATABASE_OPTIONS');
export const DEFAULT_DATABASE_TIMEOUT_S = 5;
export const DEFAULT_MIGRATION_TIMEOUT_S = 600;
