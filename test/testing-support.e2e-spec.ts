import { Test } from '@nestjs/testing';
import { PricingService, STORAGE_CLASSES } from '@app/pricing';
import { withPriceBook } from '@app/pricing/cli';
import { listPrice, ManualClock, PricingTestingModule, runPriceBookCommandLine } from '@app/pricing/testing';
import { dumpDatabase, useTestDatabase } from './support/database';
import { useTempDir } from './support/temp-dir';

// @app/pricing/testing's command line runner (docs/using-pricing.md, "Test support"), as another
// team's spec uses it: on its own test database, the CLI's output and exit codes.

const test = useTestDatabase();
const temp = useTempDir('testing-support');

it('imports a book as the CLI does, recorded as the given actor, and reads it back', async () => {
  const entry = listPrice('compute.t1.1', 'seconds', 3600, '0.2500', '2026-01-01T00:00:00Z');
  const file = await temp.write('book.json', { prices: [entry] });
  const imported = await runPriceBookCommandLine(test.dataSource, ['import', file], { actor: 'billing-tests' });
  expect(imported).toEqual({
    code: 0,
    stdout: expect.stringMatching(
      /^new {7}compute\.t1\.1 +list {2}0\.2500 per 3600 seconds from 2026-01-01T00:00:00Z\napplied at \S+Z: 1 prices set, 0 ended, 0 availability changes, 0 unchanged \(version 2\)\n$/,
    ),
    stderr: '',
  });
  const history = await runPriceBookCommandLine(test.dataSource, ['history', 'compute.t1.1', '--json'], {
    now: new Date('2026-06-01T00:00:00Z'),
  });
  expect(history.code).toBe(0);
  expect(JSON.parse(history.stdout)).toMatchObject({
    records: [{ status: 'in-force', amount: '0.2500' }],
    changes: [{ change: 'set', actor: 'billing-tests', reason: null }],
  });
});

it('gives the exit codes of the CLI: 64 and where to read the usage for wrong usage, 3 for a refusal, nothing written', async () => {
  const before = await dumpDatabase(test.dataSource);
  const usage = await runPriceBookCommandLine(test.dataSource, ['import']);
  expect(usage).toEqual({ code: 64, stdout: '', stderr: expect.stringContaining('import takes one file') });
  expect(usage.stderr).toContain("Run 'npm run -s pricing -- import --help' for its options and examples.");
  const file = await temp.write('bad.json', {
    prices: [listPrice('compute.t1.1', 'seconds', 3600, '-1', '2026-01-01T00:00:00Z')],
  });
  const refused = await runPriceBookCommandLine(test.dataSource, ['import', file], { actor: 'billing-tests' });
  expect(refused).toEqual({
    code: 3,
    stdout: '',
    stderr: expect.stringMatching(
      /\.json: refused, nothing was written:\n {2}prices\[0\]\.amount: "-1" is not a decimal amount/,
    ),
  });
  expect(await dumpDatabase(test.dataSource)).toBe(before);
});

it('pricing in memory starts from the availability of a migrated database', async () => {
  const stored = await test.dataSource.query<{ product_key: string; on_sale: boolean }[]>(
    'SELECT product_key, on_sale FROM product_availability',
  );
  const moduleRef = await Test.createTestingModule({
    imports: [PricingTestingModule.forRoot({ clock: new ManualClock('2026-01-01T00:00:00Z') })],
  }).compile();
  const pricing = moduleRef.get(PricingService);
  const keys = new Set([...stored.map((row) => row.product_key), ...STORAGE_CLASSES.map((c) => `storage.${c}`)]);
  const onSale = (key: string) => stored.find((row) => row.product_key === key)?.on_sale ?? true;
  expect([...keys].map((key) => [key, pricing.isOnSale(key)])).toEqual([...keys].map((key) => [key, onSale(key)]));
  expect(stored.length).toBeGreaterThan(0);
  await moduleRef.close();
});

describe('writes that test support offers, as PricingService answers once they resolve', () => {
  const resources = useTestDatabase({ beforeAll: false });
  const at = (instant: string) => ({ at: new Date(instant) });

  it('runPriceBookCommandLine with { pricing }: an import, then a withdrawal, answered at once', async () => {
    const { url, dataSource } = await resources.create();
    const { app } = await resources.start({ databaseUrl: url, listen: false });
    const pricing = app.get(PricingService);
    const file = await temp.write('scheduled.json', {
      prices: [
        listPrice('compute.t1.1', 'seconds', 3600, '0.2500', '2026-01-01T00:00:00Z', '2099-01-01T00:00:00Z'),
        listPrice('compute.t1.1', 'seconds', 3600, '0.3000', '2099-01-01T00:00:00Z'),
      ],
    });
    const options = { actor: 'billing-tests', pricing };
    expect((await runPriceBookCommandLine(dataSource, ['import', file], options)).code).toBe(0);
    expect(pricing.priceAt('compute.t1.1', at('2099-06-01T00:00:00Z'))).toMatchObject({ price: { amount: '0.3000' } });
    const withdraw = ['withdraw', 'compute.t1.1', '--valid-from', '2099-01-01T00:00:00Z'];
    expect((await runPriceBookCommandLine(dataSource, withdraw, options)).code).toBe(0);
    expect(pricing.priceAt('compute.t1.1', at('2099-06-01T00:00:00Z'))).toMatchObject({ price: { amount: '0.2500' } });
  });

  it('withPriceBook(dataSource) holds no prices: its write is answered after pricing.refresh()', async () => {
    const { url, dataSource } = await resources.create();
    const { app } = await resources.start({ databaseUrl: url, listen: false });
    const pricing = app.get(PricingService);
    await withPriceBook(dataSource, (priceBook) =>
      priceBook.apply(
        { prices: [listPrice('compute.t1.2', 'seconds', 3600, '0.5000', '2026-01-01T00:00:00Z')] },
        { actor: 'billing-tests' },
      ),
    );
    await pricing.refresh();
    expect(pricing.priceAt('compute.t1.2', at('2026-06-01T00:00:00Z'))).toMatchObject({ price: { amount: '0.5000' } });
  });
});
