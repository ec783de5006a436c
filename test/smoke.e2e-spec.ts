import request from 'supertest';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { applyBook, openDataSource, startTestApp, type TestApp } from './support/test-app';
import type { DataSource } from 'typeorm';

describe('smoke', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let app: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await openDataSource(db.url);
    await applyBook(dataSource, {
      prices: [
        {
          product_key: 'storage.gp1',
          unit_type: 'gib_hours',
          unit_count: 730,
          amount: '0.0480',
          valid_from: '2026-01-01T00:00:00Z',
        },
      ],
    });
    app = await startTestApp({ databaseUrl: db.url });
  });

  afterAll(async () => {
    await app?.close();
    await dataSource?.destroy();
    await db?.drop();
  });

  it('serves the price list', async () => {
    const res = await request(app.server).get('/v1/pricing').expect(200);
    expect(res.body.families[0].prices[0].amount).toBe('0.0480');
  });
});
