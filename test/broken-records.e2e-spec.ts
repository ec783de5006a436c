import { PricingMetrics, PricingService } from '@app/pricing';
import { listPrice } from '@app/pricing/testing';
import { untilWritesPublished, useTestDatabase } from './support/database';
import { send } from './support/http';
import { RecordingLogger } from './support/recording-logger';
import type { TestApp } from './support/test-app';

// Prices written around the book's rules (a superuser who set price_record's constraints aside):
// an instance refuses to load them and keeps serving the last good list, saying why in its log
// (once) and its metrics (core/record-rules.ts, snapshot/price-book-loader.ts).

const test = useTestDatabase({
  book: { prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z')] },
});

/** Writes `values` of price_record by hand, the constraints `names` set aside (added back NOT VALID), then notifies. */
async function writeAround(names: readonly string[], values: string): Promise<void> {
  const definitions = await test.dataSource.query<{ name: string; definition: string }[]>(
    `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conname = ANY($1)`,
    [names],
  );
  await test.dataSource.transaction(async (db) => {
    for (const { name } of definitions) await db.query(`ALTER TABLE price_record DROP CONSTRAINT ${name}`);
    await db.query(
      `INSERT INTO price_record (product_key, unit_type, unit_count, amount, valid_from, valid_until) VALUES ${values}`,
    );
    for (const { name, definition } of definitions) {
      await db.query(`ALTER TABLE price_record ADD CONSTRAINT ${name} ${definition} NOT VALID`);
    }
    await db.query(`UPDATE price_book_version SET version = version + 1`);
    await db.query(`SELECT pg_notify('pricing_price_book_changed', 'by hand')`);
  });
  await untilWritesPublished(test.dataSource);
}

describe('prices written around the book’s rules', () => {
  let app: TestApp;
  let logger: RecordingLogger;
  let served: string;

  beforeAll(async () => {
    logger = new RecordingLogger();
    app = await test.start({ databaseUrl: test.url, logger });
    served = (await send(app)).body.toString('utf8');
  });

  const refused = async (): Promise<number> => {
    const text = await app.app.get(PricingMetrics).registry.getSingleMetricAsString('pricing_refused_loads_total');
    return Number(/pricing_refused_loads_total (\d+)/.exec(text)![1]);
  };

  it.each([
    [
      'an amount of NaN',
      ['price_record_amount_non_negative', 'price_record_amount_precision'],
      `('storage.io1', 'gib_hours', 730, 'NaN', '2026-01-01', NULL)`,
    ],
    [
      'a negative unit count',
      ['price_record_unit_count_positive'],
      `('storage.st1', 'gib_hours', -730, 1, '2026-01-01', NULL)`,
    ],
    [
      'a valid_from of -infinity',
      ['price_record_valid_from_finite'],
      `('storage.snapshot', 'gib_hours', 730, 1, '-infinity', NULL)`,
    ],
  ])('%s: refused, the last good list served, said once in the log and counted', async (_, constraint, values) => {
    const before = await refused();
    const errors = () =>
      logger.of('error', 'PriceBookLoader').filter((line) => line.includes("break the book's rules"));
    const logged = errors().length;
    await writeAround(constraint, values);
    await app.app.get(PricingService).refresh();
    await app.app.get(PricingService).refresh(); // again: the same problem is not logged twice
    expect((await send(app)).body.toString('utf8')).toBe(served);
    expect(await refused()).toBeGreaterThanOrEqual(before + 2);
    expect(errors().length).toBe(logged + 1);
    expect(errors().at(-1)).toMatch(/stored prices break the book's rules: record \d+ \("storage\.\w+"\): its /);
    // Put right, by hand again (the history trigger set aside): the instance loads again.
    await test.dataSource.transaction(async (db) => {
      await db.query(`SET LOCAL session_replication_role = replica`);
      await db.query(`DELETE FROM price_record WHERE product_key <> 'storage.gp1'`);
      await db.query(`UPDATE price_book_version SET version = version + 1`);
    });
    await app.app.get(PricingService).refresh();
    expect((await send(app)).body.toString('utf8')).toBe(served);
    const more = await refused();
    await app.app.get(PricingService).refresh();
    expect(await refused()).toBe(more);
  });
});
