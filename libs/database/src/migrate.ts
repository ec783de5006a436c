import type { DataSource } from 'typeorm';

/** Held while migrating, so that instances starting together migrate one at a time. */
const MIGRATION_LOCK = 4_705_212_000;

/** Runs the pending migrations, each in its own transaction, under a session advisory lock. */
export async function migrateUnderLock(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
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
