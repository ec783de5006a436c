import { rm } from 'node:fs/promises';
import { runCli } from './support/cli';
import { applyBook, openDataSource } from './support/database';
import { startEmbeddedPostgresInChild, type ChildEmbeddedDatabase } from './support/embedded-postgres';
import { send, waitFor, type RawResponse } from './support/http';
import { startTestApp, type TestApp } from './support/test-app';
import { passableTempDir } from './support/temp-dir';

// GET /v1/pricing when the database goes away and comes back (docs/decisions.md, "Staleness and
// 503"): the last snapshot is served for PRICING_MAX_STALENESS_S since it was last
// confirmed, then 503; the app recovers by itself. A PostgreSQL of this file's own, stopped
// and started again on the same port and data directory.

const MAX_STALENESS_S = 5;

const expect503 = (res: RawResponse): void => {
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toBe('30');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['content-type']).toMatch(/^text\/plain(;|$)/);
  expect(res.headers.etag).toBeUndefined();
  expect(res.body.length).toBeGreaterThan(0);
};

describe('GET /v1/pricing without its database', () => {
  let dir: string;
  let port: number;
  let url: string;
  let migrationUrl: string;
  let postgres: ChildEmbeddedDatabase | undefined;
  const apps: TestApp[] = [];

  const startPostgres = async (): Promise<void> => {
    postgres = await startEmbeddedPostgresInChild(dir, { port });
  };
  const stopPostgres = async (): Promise<void> => {
    await postgres?.stop();
    postgres = undefined;
  };

  const start = async (options: { waitUntilReady?: boolean } = {}): Promise<TestApp> => {
    const app = await startTestApp({
      databaseUrl: url,
      env: {
        PRICING_MAX_STALENESS_S: String(MAX_STALENESS_S),
        PRICING_RATE_LIMIT: '100000',
        DATABASE_MIGRATION_URL: migrationUrl,
      },
      listen: true,
      ...options,
    });
    apps.push(app);
    return app;
  };
  const stop = async (app: TestApp): Promise<void> => {
    apps.splice(apps.indexOf(app), 1);
    await app.close();
  };

  beforeAll(async () => {
    dir = await passableTempDir('price-list-resilience');
    postgres = await startEmbeddedPostgresInChild(dir);
    url = postgres.url;
    // The embedded default's owner migrates; the app runs as its runtime role (url).
    migrationUrl = postgres.migrationUrl!;
    port = Number(new URL(url).port);
    const migrated = await runCli(['migrate'], { DATABASE_URL: url, DATABASE_MIGRATION_URL: migrationUrl });
    expect(migrated.code).toBe(0);
    // Written as the embedded default's writer: the service's role (url) only reads.
    const dataSource = await openDataSource(postgres.writerUrl);
    try {
      await applyBook(dataSource, {
        prices: [
          {
            product_key: 'storage.gp1',
            unit_type: 'gib_hours',
            unit_count: 730,
            amount: '0.0480',
            valid_from: '2025-01-01T00:00:00Z',
          },
        ],
      });
    } finally {
      await dataSource.destroy();
    }
  }, 60_000);

  afterAll(async () => {
    for (const app of apps.splice(0)) await app.close();
    await stopPostgres();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it('keeps serving the last list while within PRICING_MAX_STALENESS_S, then 503, then recovers by itself', async () => {
    const app = await start();
    const served = await send(app);
    expect(served.status).toBe(200);
    const etag = served.headers.etag;
    expect(etag).toMatch(/^W\/"/);

    const stoppedAt = performance.now();
    await stopPostgres();

    // Within the window: the same list, and still ready (losing the database alone is no reason).
    const during = await send(app);
    expect(performance.now() - stoppedAt).toBeLessThan((MAX_STALENESS_S - 1) * 1000);
    expect(during.status).toBe(200);
    expect(during.headers.etag).toBe(etag);
    expect(during.body.equals(served.body)).toBe(true);
    expect((await send(app, 'GET', {}, '/health/ready')).status).toBe(200);
    const { value: unreachable } = await waitFor(
      'the app to notice the database is gone',
      () => send(app, 'GET', {}, '/health/ready'),
      (res) => JSON.parse(res.body.toString('utf8')).database.reachable === false,
      MAX_STALENESS_S * 1000,
    );
    expect(unreachable.status).toBe(200);
    expect((await send(app)).headers.etag).toBe(etag);

    // After the window: 503, and not ready.
    const { value: unavailable } = await waitFor(
      'the list to become too stale',
      () => send(app),
      (res) => res.status !== 200,
      (MAX_STALENESS_S + 2) * 1000,
    );
    // confirmed at most ~1 s (the check interval) before the stop
    expect(performance.now() - stoppedAt).toBeGreaterThan((MAX_STALENESS_S - 1.5) * 1000);
    expect503(unavailable);
    expect((await send(app, 'GET', {}, '/health/ready')).status).toBe(503);
    expect((await send(app, 'GET', {}, '/health/live')).status).toBe(200);

    // The database is back on the same port: the app recovers without a restart.
    await startPostgres();
    const { value: recovered } = await waitFor(
      'the app to recover',
      () => send(app),
      (res) => res.status === 200,
      10_000,
    );
    expect(recovered.headers.etag).toBe(etag);
    expect(recovered.body.equals(served.body)).toBe(true);
    expect((await send(app, 'GET', {}, '/health/ready')).status).toBe(200);
    await stop(app);
  }, 30_000);

  it('an app started while the database is down answers 503, then serves once the database is up', async () => {
    await stopPostgres();
    const app = await start({ waitUntilReady: false });
    expect503(await send(app));
    expect((await send(app, 'GET', {}, '/health/live')).status).toBe(200);
    expect((await send(app, 'GET', {}, '/health/ready')).status).toBe(503);

    await startPostgres();
    const { value } = await waitFor(
      'the app to load prices',
      () => send(app),
      (res) => res.status === 200,
      10_000,
    );
    expect(value.headers['content-type']).toBe('application/json');
    expect(JSON.parse(value.body.toString('utf8')).families).toEqual([
      {
        family: 'storage_volume',
        prices: [
          {
            product_key: 'storage.gp1',
            dimensions: { storage_class: 'gp1' },
            unit_type: 'gib_hours',
            unit_count: 730,
            amount: '0.0480',
            valid_from: '2025-01-01T00:00:00Z',
            valid_until: null,
          },
        ],
      },
    ]);
    expect((await send(app, 'GET', {}, '/health/ready')).status).toBe(200);
    await stop(app);
  }, 30_000);
});
