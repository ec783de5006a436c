// The public surface of the database library: apps and other libraries import from `@app/database` only.
export { DatabaseModule, type DatabaseModuleAsyncOptions } from './database.module';
export { DatabaseConnection, type DatabaseState } from './database-connection';
export { DATABASE_OPTIONS, type DatabaseModuleOptions, type RoleGrant } from './database.options';
export { dataSourceOptions, clientConfig, migrationLimits } from './data-source-options';
export {
  migrateUnderLock,
  pendingMigrations,
  MIGRATION_LOCK,
  MigrationTimeoutError,
  type MigrationLimits,
} from './migrate';
export { migrateDatabase, groupGrantsOf, GroupRolesMissingError, SchemaBehindError } from './migrate-database';
export { databaseCall, DatabaseUnavailableError, isAnswered } from './database-errors';
export { DatabaseTimeoutError, type TimedClient } from './timed-client';
export { inTransaction, CommitOutcomeUnknownError, type TransactionOptions } from './transaction';
