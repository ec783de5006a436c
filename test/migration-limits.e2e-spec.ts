import type { TestingModule } from '@nestjs/testing';
import { appDatabaseOptions } from '@app/control-plane';
import { DatabaseConnection, MIGRATION_LOCK } from '@app/database';
import { Client } from 'pg';
import { performance } from 'node:perf_hooks';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { useTestDatabase, type TestDatabase } from './support/database';
import { settledState, startDatabaseModule } from './support/database-module';
import { RecordingLogger } from './support/recording-logger';
import { queryAt } from './support/sql';

// Start-up migrations run with limits of their own (libs/database/src/migrate.ts): a statement may
// take up to DATABASE_MIGRATION_TIMEOUT_S, not DATABASE_TIMEOUT_S; a migration that overruns it is
// not tried again, while a wait for another instance's migration is; and a wait for a table lock ends at DATABASE_TIMEOUT_S (lock_timeout), so reads
// never queue behind a migration for long.

const DATABASE_TIMEOUT_S = 1;

/** Counts its attempts, and sleeps `seconds` in PostgreSQL. */
function sleepingMigration(
  name: string,
  seconds: number,
): { migration: new () => MigrationInterface; attempts: () => number } {
  let attempts = 0;
  class Sleeping implements MigrationInterface {
    name = name;
    async up(db: QueryRunner): Promise<void> {
      attempts++;
      await db.query(`SELECT pg_sleep(${seconds})`);
    }
    async down(): Promise<void> {}
  }
  return { migration: Sleeping, attempts: () => attempts };
}

class AltersPriceRecord1799999999003 implements MigrationInterface {
  name = 'AltersPriceRecord1799999999003';
  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE price_record ADD COLUMN migration_limits_probe integer`);
  }
  async down(): Promise<void> {}
}

describe('start-up migrations', () => {
  const databases = useTestDatabase({ beforeAll: false });
  let db: TestDatabase;
  let module: TestingModule | undefined;
  const logger = new RecordingLogger();

  beforeEach(async () => {
    db = await databases.create();
    logger.lines.length = 0;
  });
  afterEach(async () => {
    await module?.close();
    module = undefined;
    await db?.close();
  });

  async function start(
    migrations: (new () => MigrationInterface)[],
    migrationTimeoutS: number,
  ): Promise<DatabaseConnection> {
    module = await startDatabaseModule(
      appDatabaseOptions(db.url, DATABASE_TIMEOUT_S, migrationTimeoutS),
      migrations,
      logger,
    );
    return module.get(DatabaseConnection);
  }

  it('runs a statement longer than DATABASE_TIMEOUT_S within DATABASE_MIGRATION_TIMEOUT_S, once', async () => {
    const slow = sleepingMigration('SlowButWithinItsLimit1799999999001', 2.5 * DATABASE_TIMEOUT_S);
    const connection = await start([slow.migration], 30);
    expect(await settledState(connection)).toBe('ready');
    expect(slow.attempts()).toBe(1);
    // Its connection went back to the pool with the pool's limits: the most recently released is reused first.
    const dataSource = module!.get(DataSource);
    const [{ statement_timeout }] = await dataSource.query<{ statement_timeout: string }[]>('SHOW statement_timeout');
    const [{ lock_timeout }] = await dataSource.query<{ lock_timeout: string }[]>('SHOW lock_timeout');
    expect({ statement_timeout, lock_timeout }).toEqual({
      statement_timeout: `${DATABASE_TIMEOUT_S}s`,
      lock_timeout: '0',
    });
  }, 30_000);

  it('does not try again a migration that overran its limit: it fails once, says why, and is never ready', async () => {
    const endless = sleepingMigration('LongerThanItsLimit1799999999002', 3);
    const connection = await start([endless.migration], 1);
    expect(await settledState(connection)).toBe('failed');
    await expect(connection.whenReady()).rejects.toThrow(/time limit/);
    await new Promise((resolve) => setTimeout(resolve, 4_500)); // two retry intervals of a failed connection
    expect(endless.attempts()).toBe(1);
    expect(logger.of('error', 'DatabaseConnection')).toEqual([
      expect.stringMatching(
        /^a migration statement did not finish within 1 s \(DATABASE_MIGRATION_TIMEOUT_S\): .*not retried/,
      ),
    ]);
  }, 30_000);

  it("waits for another instance's migration longer than DATABASE_MIGRATION_TIMEOUT_S: it tries again, and migrates once that one ends", async () => {
    const other = new Client({ connectionString: db.url });
    await other.connect();
    await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]); // another instance, migrating
    try {
      const ours = sleepingMigration('AfterTheOtherInstance1799999999004', 0);
      const connection = await start([ours.migration], 1);
      // Past the limit, and past a retry: the wait ended at least once, and was not taken as our overrun.
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      expect(connection.isReady).toBe(false);
      expect(logger.of('error', 'DatabaseConnection')).toEqual([]);
      expect(logger.of('warn', 'DatabaseConnection')).toEqual([
        expect.stringMatching(/another instance was still migrating after 1 s/),
      ]);
      expect(ours.attempts()).toBe(0);
      await other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      expect(await settledState(connection)).toBe('ready');
      expect(ours.attempts()).toBe(1);
    } finally {
      await other.end();
    }
  }, 30_000);

  it('gives up a table lock it waits for after DATABASE_TIMEOUT_S, so that reads do not queue behind it, and tries again', async () => {
    const holder = new Client({ connectionString: db.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE price_record IN ACCESS SHARE MODE'); // a long read, say
    try {
      const connection = await start([AltersPriceRecord1799999999003], 60);
      await waitForLockWait(db.url); // the migration's ALTER waits behind the long read
      const started = performance.now();
      const [{ count }] = await queryAt<{ count: string }>(db.url, 'SELECT count(*) FROM price_record');
      const readWaitedMs = performance.now() - started;
      expect(count).toBe('0');
      // Without lock_timeout the read would wait behind the ALTER until the long read ends.
      expect(readWaitedMs).toBeLessThan(DATABASE_TIMEOUT_S * 1000 + 1_500);
      expect(connection.isReady).toBe(false);
      await holder.query('COMMIT');
      expect(await settledState(connection)).toBe('ready');
      expect(logger.of('warn', 'DatabaseConnection')).toEqual([expect.stringMatching(/lock timeout/)]);
    } finally {
      await holder.end();
    }
  }, 30_000);
});

/** Resolves once some session of the database waits for a relation lock. */
async function waitForLockWait(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const [{ waiting }] = await queryAt<{ waiting: boolean }>(
      url,
      `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted AND locktype = 'relation') AS waiting`,
    );
    if (waiting) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no session waited for a lock');
}
