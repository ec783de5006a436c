import { PricingService } from '@app/pricing';
import { listPrice } from '@app/pricing/testing';
import { send, waitFor } from './support/http';
import { RecordingLogger } from './support/recording-logger';
import { applyBook, openDataSource } from './support/database';
import { adminUrl, newDatabase, withDatabase } from './support/template-database';
import { queryAt } from './support/sql';
import { startTestApp, type TestApp } from './support/test-app';

// Restores and failovers (docs/operations.md; docs/decisions.md, "Prices in memory"): an
// instance that sees a version, a record count or a latest change it cannot account for reads
// everything again, and a write after a restore is served within seconds, never the write the
// restore lost. A restore is played here as an operator's swap of databases under a running
// instance: the database it uses is renamed away (its connections dropped) and a copy taken
// earlier is renamed into its place. test/price-list-rebuild.e2e-spec.ts has writes by hand that
// the changes read cannot account for; this is what a restore adds: the version going back, and a
// write after it that brings it back to the number the instance held.

const BOOK = { prices: [listPrice('compute.g2.4', 'seconds', 3600, '0.0610', '2026-01-01T00:00:00Z')] };
/** One new price each: the same number of records and change-log rows, so the same version and ids. */
const LOST = { prices: [listPrice('compute.lost.1', 'seconds', 3600, '0.9999', '2026-01-01T00:00:00Z')] };
const AFTER = { prices: [listPrice('compute.after.1', 'seconds', 3600, '0.7777', '2026-01-01T00:00:00Z')] };
/** Well within the staleness limit: the instance's own checks, not a refresh by the test. */
const SERVED_WITHIN_MS = 15_000;

/** One statement as the test server's superuser. */
const admin = <T = unknown>(sql: string): Promise<T[]> => queryAt<T>(adminUrl(), sql);

const nameOf = (url: string): string => new URL(url).pathname.slice(1);

/** Applies a book to the database at `url` on a connection of its own; the version it wrote. */
async function write(url: string, book: unknown): Promise<string> {
  const dataSource = await openDataSource(url);
  try {
    return (await applyBook(dataSource, book)).version;
  } finally {
    await dataSource.destroy();
  }
}

describe('a restore of the database under a running instance', () => {
  let db: Awaited<ReturnType<typeof newDatabase>>;
  let name: string;
  let app: TestApp;
  const logs = new RecordingLogger();
  const copies: string[] = [];

  /** A copy of the database now (no one may be connected to it meanwhile): the backup. */
  async function backup(): Promise<string> {
    const copy = `${name}_backup_${copies.length}`;
    await admin(`CREATE DATABASE ${copy} TEMPLATE ${name}`);
    copies.push(copy);
    return copy;
  }

  /** The instance's database replaced by `copy`: its connections dropped, the old one kept aside. */
  async function restore(copy: string): Promise<void> {
    const lost = `${name}_lost_${copies.length}`;
    await admin(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
    // A terminated backend may take a moment to go.
    await waitFor(
      'the connections to go',
      () => admin<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${name}'`),
      ([{ n }]) => n === 0,
      10_000,
    );
    await admin(`ALTER DATABASE ${name} RENAME TO ${lost}`);
    await admin(`ALTER DATABASE ${copy} RENAME TO ${name}`);
    copies.splice(copies.indexOf(copy), 1, lost);
  }

  const pricing = (): PricingService => app.app.get(PricingService);
  /**
   * What the instance serves: its version, and which of the three keys it prices and lists, all of
   * one snapshot (read again when a new one was swapped in while the list was fetched).
   */
  async function served(): Promise<{ version: string | null; priced: string[]; listed: string[] }> {
    const keys = ['compute.g2.4', 'compute.lost.1', 'compute.after.1'];
    for (;;) {
      const version = pricing().health().version;
      const priced = keys.filter((key) => pricing().priceAt(key).found);
      const res = await send(app);
      expect(res.status).toBe(200);
      const list = res.body.toString('utf8');
      if (pricing().health().version !== version) continue;
      return { version, priced, listed: keys.filter((key) => list.includes(`"${key}"`)) };
    }
  }
  const serving = (version: string, ...keys: string[]) => ({ version, priced: keys, listed: keys });
  const readEverything = () =>
    logs.of('log', 'PriceBookLoader').filter((line) => line.includes('reading every price again'));

  beforeEach(async () => {
    db = await newDatabase(true);
    name = nameOf(db.url);
    await write(db.url, BOOK);
  });
  afterEach(async () => {
    await app?.close();
    for (const copy of copies.splice(0)) await admin(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`);
    await db?.drop();
    logs.lines.splice(0);
  });

  async function start(): Promise<string> {
    app = await startTestApp({
      databaseUrl: db.url,
      listen: true,
      logger: logs,
      env: { LOG_LEVEL: 'debug', PRICING_RATE_LIMIT: '1000000' },
    });
    return pricing().health().version!;
  }

  it('reads the restored database again: the lost write is no longer served; a write after it is', async () => {
    const saved = await backup();
    const base = await start();
    const lostVersion = await write(db.url, LOST);
    // Priced once the instance vouches for the write's instant (PricingService's book as recorded now).
    const lost = await waitFor('the lost write', served, (now) => now.priced.length === 2, SERVED_WITHIN_MS);
    expect(lost.value).toEqual(serving(lostVersion, 'compute.g2.4', 'compute.lost.1'));

    await restore(saved);
    // A version below its own: the instance cannot account for it, and reads everything again.
    const restored = await waitFor('the restored database', served, (now) => now.version === base, SERVED_WITHIN_MS);
    expect(restored.value).toEqual(serving(base, 'compute.g2.4'));
    expect(readEverything().length).toBeGreaterThan(0);

    const after = await write(db.url, AFTER);
    expect(after).toBe(lostVersion);
    const { value } = await waitFor('the write after', served, (now) => now.priced.length === 2, SERVED_WITHIN_MS);
    expect(value).toEqual(serving(after, 'compute.g2.4', 'compute.after.1'));
  });

  it('serves a write made after the restore, never the lost one, though it brings back the version the instance held', async () => {
    const saved = await backup();
    await start();
    const lostVersion = await write(db.url, LOST);
    await waitFor('the lost write', served, (now) => now.version === lostVersion, SERVED_WITHIN_MS);
    // The write after the restore lands before the instance looks: the same version, the same
    // number of records and change ids as the lost one, another price.
    const after = await write(withDatabase(db.url, saved), AFTER);
    expect(after).toBe(lostVersion);
    await restore(saved);

    const { value } = await waitFor(
      'the write after the restore',
      served,
      (now) => now.priced.includes('compute.after.1'),
      SERVED_WITHIN_MS,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}; serving ${JSON.stringify(await served())}`);
    });
    expect(value).toEqual(serving(after, 'compute.g2.4', 'compute.after.1'));
    // Its version is the one held, but not its latest change: everything is read again.
    expect(readEverything().length).toBeGreaterThan(0);
  });
});
