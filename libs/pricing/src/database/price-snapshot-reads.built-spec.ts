import { listPrice, organizationPrice } from '../testing/price-book-entries';
import { createTestDatabase, type TestDatabase } from '../testing/test-database';
import type { DataSource } from 'typeorm';
import { applyBook, openDataSource } from '../../../../test/support/test-app';
import { PriceSnapshotReads } from './price-snapshot-reads';

// `listLog` (pricing-data.ts): the list's change-log rows with what each write did, for the
// public list's past (GET /v1/pricing/at/{instant} and /v1/pricing/changes read them).

let db: TestDatabase;
let dataSource: DataSource;
beforeAll(async () => {
  db = await createTestDatabase();
  dataSource = await openDataSource(db.url);
});
afterAll(async () => {
  await dataSource?.destroy();
  await db?.drop();
});

it('gives the list’s rows of the change log in id order, with their effects; since a row, the later ones only', async () => {
  await applyBook(dataSource, {
    products: [{ product_key: 'storage.io1', on_sale: true }],
    prices: [
      listPrice('compute.l1.1', 'seconds', 3600, '0.10', '2025-01-01T00:00:00Z'),
      organizationPrice('org_1', 'compute.l1.1', 'seconds', 3600, '0.09', '2025-01-01T00:00:00Z'),
    ],
  });
  const reads = new PriceSnapshotReads(dataSource);
  const first = await reads.loadPricingData();
  expect(first.listLog).toHaveLength(1);
  const [set] = first.listLog;
  expect([set.change, set.productKey, set.effect?.record?.amount, set.effect?.record?.valid_until]).toEqual([
    'set',
    'compute.l1.1',
    '0.10',
    null,
  ]);
  expect(set.recordId).toBe(Number(set.effect?.record?.id));
  // The write's instant: when its lock was granted, after its transaction began (recorded_at).
  expect(set.at).toBeGreaterThanOrEqual(Number(set.effect?.record?.recorded_at) / 1000);
  expect((await reads.loadPricingData({ listOnly: true })).listLog).toEqual(first.listLog);

  await applyBook(dataSource, { prices: [listPrice('compute.l1.1', 'seconds', 3600, '0.11', '2030-01-01T00:00:00Z')] });
  const since = await reads.loadChangesSince(first.lastChangeId);
  const from2030 = String(Date.parse('2030-01-01T00:00:00Z') * 1000);
  expect(
    since.listLog.map(({ change, effect }) => {
      const record = effect?.record ?? effect?.ends?.[0];
      return [change, record?.amount, record?.valid_from === from2030, record?.valid_until];
    }),
  ).toEqual([
    ['set', '0.11', true, null],
    ['end', '0.10', false, from2030],
  ]);
  expect(since.listLog[0].at).toBeGreaterThan(first.listLog[0].at);
  expect((await reads.loadPricingData()).listLog).toEqual([...first.listLog, ...since.listLog]);
});
