import type { DataSourceOptions } from 'typeorm';

export interface DatabaseModuleOptions {
  /** PostgreSQL URL of the one database the app uses. */
  readonly url: string;
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
}

export const DATABASE_OPTIONS = Symbol('DATABASE_OPTIONS');
export const DEFAULT_DATABASE_TIMEOUT_S = 5;
