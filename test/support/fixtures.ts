import { createTestDatabase, type TestDatabase } from '@app/pricing/testing';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { openDataSource } from './test-app';

/** What a file's `beforeAll` makes, read once it has run. */
export interface TestDatabaseFixture {
  readonly db: TestDatabase;
  readonly dataSource: DataSource;
}

/**
 * A test database of the file's own (copied from the migrated template) and a DataSource on it,
 * made in `beforeAll` and dropped in `afterAll`.
 */
export function useTestDatabase(): TestDatabaseFixture {
  let made: TestDatabaseFixture | undefined;
  beforeAll(async () => {
    const db = await createTestDatabase();
    made = { db, dataSource: await openDataSource(db.url) };
  });
  afterAll(async () => {
    if (made?.dataSource.isInitialized) await made.dataSource.destroy();
    await made?.db.drop();
  });
  const get = (): TestDatabaseFixture => {
    if (!made) throw new Error('the test database is made in beforeAll');
    return made;
  };
  return {
    get db() {
      return get().db;
    },
    get dataSource() {
      return get().dataSource;
    },
  };
}

/** A directory of the file's own under the system's temporary one, removed in `afterAll`. */
export function useTempDir(prefix: string): { readonly path: string } {
  let path: string | undefined;
  beforeAll(async () => (path = await mkdtemp(join(tmpdir(), `${prefix}-`))));
  afterAll(() => (path ? rm(path, { recursive: true, force: true }) : undefined));
  return {
    get path() {
      if (!path) throw new Error('the directory is made in beforeAll');
      return path;
    },
  };
}
