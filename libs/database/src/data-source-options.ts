import type { ClientConfig } from 'pg';
import type { DataSourceOptions } from 'typeorm';
import {
  DEFAULT_DATABASE_TIMEOUT_S,
  DEFAULT_MIGRATION_TIMEOUT_S,
  type DatabaseModuleOptions,
} from './database.options';
import type { MigrationLimits } from './migrate';
import { timedClient, type TimedClient } from './timed-client';
import { TypeOrmLogger } from './typeorm-logger';

function timeoutMsOf(options: DatabaseModuleOptions): number {
  return (options.timeoutS ?? DEFAULT_DATABASE_TIMEOUT_S) * 1000;
}

/** The limits of a migration: its own time limit, and the database timeout for waits on table locks. */
export function migrationLimits(options: DatabaseModuleOptions): MigrationLimits {
  return {
    timeoutMs: (options.migrationTimeoutS ?? DEFAULT_MIGRATION_TIMEOUT_S) * 1000,
    lockTimeoutMs: timeoutMsOf(options),
  };
}

/** The connection settings of every client of the app: the pool's and the LISTEN connection's. */
export function clientConfig(options: DatabaseModuleOptions): ClientConfig {
  const timeoutMs = timeoutMsOf(options);
  return {
    connectionString: options.url,
    application_name: options.applicationName,
    connectionTimeoutMillis: timeoutMs,
    // A server-side limit too, so that PostgreSQL stops work nobody waits for any more.
    statement_timeout: timeoutMs,
    keepAlive: true,
  };
}

/** The pg Client class of every client of the app: each query has the database timeout as its deadline. */
export function timedClientClass(options: DatabaseModuleOptions): new (config?: ClientConfig) => TimedClient {
  return timedClient(timeoutMsOf(options));
}

/** One place for the DataSource settings of the app, the CLI and the tests. */
export function dataSourceOptions(options: DatabaseModuleOptions): DataSourceOptions {
  const { connectionString, application_name, ...client } = clientConfig(options);
  return {
    type: 'postgres',
    url: connectionString,
    applicationName: application_name,
    entities: options.entities ?? [],
    migrations: options.migrations ?? [],
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logger: new TypeOrmLogger(),
    extra: {
      ...client,
      max: options.poolSize ?? 10,
      // Idle connections never keep the process alive (a query in flight does): a host that
      // failed to start and never closed its app still exits (docs/using-pricing.md).
      allowExitOnIdle: true,
      Client: timedClientClass(options),
    },
  };
}
