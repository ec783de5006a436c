import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { useTestDatabase } from './support/database';
import { get, startService, waitUntilReady, type Service } from './support/service';
import { ALL_MIGRATIONS } from './support/contract';
import { passableTempDir } from './support/temp-dir';

describe('the service as npm start runs it', () => {
  const running: Service[] = [];
  const databases = useTestDatabase({ beforeAll: false });
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await passableTempDir('pricing-main');
  });

  afterAll(async () => {
    for (const service of running) {
      service.process.kill('SIGTERM');
      await service.exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses a bad configuration, naming the variable', async () => {
    const service = await startService({ PORT: '3000', PRICING_RATE_LIMIT: 'many', DATA_DIR: dataDir });
    expect(await service.exited).toBe(1);
    expect(service.output()).toContain('PRICING_RATE_LIMIT must be a positive integer');
  });

  it('without DATABASE_URL: the embedded PostgreSQL with the sample book, stopped cleanly on SIGTERM, data kept', async () => {
    const first = await startService({ DATA_DIR: dataDir });
    running.push(first);
    await waitUntilReady(first);
    const list = await get(`${first.url}/v1/pricing`);
    const families = (JSON.parse(list.text) as { families: { family: string }[] }).families.map((f) => f.family);
    expect(families).toHaveLength(11); // the sample book prices every family
    const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
    expect(existsSync(pidFile)).toBe(true);

    first.process.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    running.pop();
    expect(existsSync(pidFile)).toBe(false); // PostgreSQL stopped with the service
    expect(first.output()).toContain('SIGTERM: shutting down');

    // Started again on the same data: the prices are still there, the sample book is not loaded twice.
    const second = await startService({ DATA_DIR: dataDir });
    running.push(second);
    await waitUntilReady(second);
    expect((await get(`${second.url}/v1/pricing`)).text).toBe(list.text);
    expect(second.output()).not.toContain('loaded the sample price book');
    second.process.kill('SIGINT');
    expect(await second.exited).toBe(0);
    running.pop();
  }, 90_000);

  it('with DATABASE_URL: migrates that database and loads nothing into it', async () => {
    const empty = await databases.create({ migrated: false });
    try {
      const service = await startService({ DATABASE_URL: empty.url, DATA_DIR: dataDir });
      running.push(service);
      await waitUntilReady(service);
      expect((await get(`${service.url}/v1/pricing`)).text).toBe(
        '{"currency":"EUR","amounts_exclude_vat":true,"last_changed":null,"families":[]}',
      );
      service.process.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      running.pop();
      const db = new Client({ connectionString: empty.url });
      await db.connect();
      const migrations = await db.query<{ name: string }>('SELECT name FROM migrations ORDER BY id');
      const prices = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM price_record');
      await db.end();
      expect(migrations.rows.map((r) => r.name)).toEqual(ALL_MIGRATIONS);
      expect(prices.rows[0].n).toBe('0');
    } finally {
      await empty.close();
    }
  }, 60_000);

  it('exits with 1 when its port is taken, naming it, once the app and the embedded PostgreSQL have stopped', async () => {
    const taken = createServer();
    await new Promise<void>((listening) => taken.listen(0, '127.0.0.1', listening));
    const port = (taken.address() as AddressInfo).port;
    try {
      const service = await startService({ DATA_DIR: dataDir, PORT: String(port), METRICS_PORT: 'off' });
      running.push(service);
      expect(await service.exited).toBe(1);
      running.pop();
      expect(service.output()).toContain(`EADDRINUSE: address already in use 127.0.0.1:${port}`);
      // Stopped before the exit, not left to the exit hook's signal: its pid file is gone.
      expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    } finally {
      taken.close();
    }
  }, 60_000);
});
