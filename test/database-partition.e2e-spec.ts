import { performance } from 'node:perf_hooks';
import { DataSource, QueryFailedError } from 'typeorm';
import { appDatabaseOptions } from '@app/control-plane';
import { DatabaseTimeoutError, dataSourceOptions } from '@app/database';
import { applyBook, openDataSource, useTestDatabase } from './support/database';
import { send, waitFor } from './support/http';
import { TcpProxy } from './support/tcp-proxy';
import { startTestApp, type TestApp } from './support/test-app';

// No database call waits forever (docs/decisions.md, "Staleness and 503"): a TCP proxy between the app
// and PostgreSQL cuts every connection silently, as a partition does, then heals.

const TIMEOUT_S = 1;

const db = useTestDatabase();
let proxy: TcpProxy;

beforeEach(async () => {
  const target = new URL(db.url);
  proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
});

afterEach(async () => {
  await proxy.close();
});

/** A DataSource of the app's settings through the proxy, with a short timeout. */
async function openThroughProxy(): Promise<DataSource> {
  const options = dataSourceOptions(appDatabaseOptions(proxy.urlOf(db.url), TIMEOUT_S));
  const dataSource = new DataSource({ ...options, logging: false });
  await dataSource.initialize();
  return dataSource;
}

async function failure(promise: Promise<unknown>): Promise<{ error: unknown; elapsedMs: number }> {
  const started = performance.now();
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, elapsedMs: performance.now() - started };
}

describe('a connection that went silent', () => {
  it('fails a query with DatabaseTimeoutError at the timeout, destroys its socket, and the pool opens a new connection', async () => {
    const dataSource = await openThroughProxy();
    try {
      const [{ pid: before }] = await dataSource.query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
      expect(await proxy.socketsHeldByThisProcess()).toBe(1); // the pool's one connection
      proxy.partition();

      const { error, elapsedMs } = await failure(dataSource.query('SELECT 1'));
      expect(error).toBeInstanceOf(QueryFailedError);
      expect((error as QueryFailedError).driverError).toBeInstanceOf(DatabaseTimeoutError);
      expect(elapsedMs).toBeGreaterThanOrEqual(TIMEOUT_S * 1000 - 50);
      expect(elapsedMs).toBeLessThan(TIMEOUT_S * 1000 + 2000);
      expect(await proxy.socketsHeldByThisProcess()).toBe(0); // destroyed, not returned to the pool

      // A connection attempt during the partition times out too, and its socket is destroyed.
      const attempt = await failure(dataSource.query('SELECT 1'));
      expect(String(attempt.error)).toMatch(/connection timeout/);
      expect(attempt.elapsedMs).toBeGreaterThanOrEqual(TIMEOUT_S * 1000 - 50);
      expect(attempt.elapsedMs).toBeLessThan(TIMEOUT_S * 1000 + 2000);
      expect(proxy.acceptedSincePartition).toBe(1);
      expect(await proxy.socketsHeldByThisProcess()).toBe(0);

      proxy.heal();
      const [{ pid: after }] = await dataSource.query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
      expect(after).not.toBe(before);
    } finally {
      await dataSource.destroy();
    }
  });

  it('closing the pool during a partition ends within the timeout and leaves no socket open', async () => {
    const dataSource = await openThroughProxy();
    await dataSource.query('SELECT 1');
    expect(await proxy.socketsHeldByThisProcess()).toBeGreaterThan(0);
    proxy.partition();
    const started = performance.now();
    await dataSource.destroy();
    expect(performance.now() - started).toBeLessThan(TIMEOUT_S * 1000 + 2000);
    await waitFor(
      'every socket to the proxy to be closed',
      () => proxy.socketsHeldByThisProcess(),
      (held) => held === 0,
      5_000,
    );
  });
});

describe('the app through a partition', () => {
  let direct: DataSource;
  let app: TestApp;

  beforeEach(async () => {
    direct = await openDataSource(db.url); // writes go around the proxy
    await applyBook(direct, gp1('0.0480'));
    app = await startTestApp({
      databaseUrl: proxy.urlOf(db.url),
      // The version check runs every 30 s: a change seen sooner came through NOTIFY.
      env: { DATABASE_TIMEOUT_S: String(TIMEOUT_S), PRICING_MAX_STALENESS_S: '3600', PRICING_RATE_LIMIT: '1000000' },
      listen: true,
    });
    await waitFor('the LISTEN session', () => listenerPort(), Boolean, 10_000);
  });

  afterEach(async () => {
    await app?.close();
    await direct?.destroy();
  });

  const gp1 = (amount: string) => ({
    prices: [{ product_key: 'storage.gp1', unit_type: 'gib_hours', unit_count: 730, amount }],
  });

  /** The client port of the app's LISTEN session through a live connection of the proxy. */
  async function listenerPort(): Promise<number | undefined> {
    const sessions: { client_port: number }[] = await direct.query(
      `SELECT client_port FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'control-plane listener'
          AND client_port = ANY($1::int[])`,
      [proxy.forwardingPorts()],
    );
    return sessions.length === 1 ? sessions[0].client_port : undefined;
  }

  async function amountServed(): Promise<string | undefined> {
    const res = await send(app);
    const list = JSON.parse(res.body.toString('utf8')) as { families: { prices: { amount: string }[] }[] };
    return list.families[0]?.prices[0]?.amount;
  }

  /** Imports a new amount directly and waits, at most a few seconds, for the app to serve it. */
  async function expectChangeSeenSoon(amount: string): Promise<void> {
    await applyBook(direct, gp1(amount));
    await waitFor(`${amount} to be served`, amountServed, (served) => served === amount, 5_000);
  }

  it('serves the snapshot throughout; after the heal, changes reach it through NOTIFY again within seconds', async () => {
    await expectChangeSeenSoon('0.0490');
    const before = await send(app);

    // Until the app has noticed (the LISTEN heartbeat times out) and failed to reconnect: the
    // snapshot is served at once.
    proxy.partition();
    const partitionedAt = performance.now();
    let served = 0;
    while (proxy.acceptedSincePartition < 2) {
      if (performance.now() - partitionedAt > 10_000) throw new Error('the app did not try to reconnect in 10 s');
      const started = performance.now();
      const res = await send(app);
      expect(performance.now() - started).toBeLessThan(TIMEOUT_S * 1000);
      expect(res.status).toBe(200);
      expect(res.headers.etag).toBe(before.headers.etag);
      served += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(served).toBeGreaterThan(10);

    proxy.heal();
    await waitFor('the LISTEN session after the heal', () => listenerPort(), Boolean, 15_000, 100);
    await expectChangeSeenSoon('0.0500');
    await expectChangeSeenSoon('0.0510');

    // Every socket of a dead connection was destroyed: the app holds only live ones.
    await waitFor(
      'the dead connections to be closed',
      () => proxy.socketsHeldByThisProcess(),
      (held) => held === proxy.forwardingPorts().length,
      15_000,
      100,
    );
  }, 60_000);

  it('a NOTIFY whose version check meets a dead pool connection is not lost: the check is tried again at once', async () => {
    const listener = (await listenerPort())!;
    // The pool's connections go silent; the LISTEN connection and new connections still work.
    proxy.cut(proxy.forwardingPorts().filter((port) => port !== listener));
    await expectChangeSeenSoon('0.0490');
    expect(await listenerPort()).toBe(listener);
  }, 30_000);
});
