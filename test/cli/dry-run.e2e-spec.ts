import { applyBook, dumpDatabase } from '../support/database';
import { expectApplied, inDays, inParallel, linesOf, planLines, price, sampleBook } from '../support/price-book-cli';
import { useCliDatabase } from '../support/price-book-cli';

// `import --dry-run`: the plan, checked against the price book as import would, in a read-only
// snapshot: nothing is written. A dry run on a database of another application: test/cli/dry-run-elsewhere.e2e-spec.ts.

describe('import --dry-run: the plan, checked as import would, written nowhere', () => {
  const f = useCliDatabase();
  const at = inDays(30);
  const later = inDays(60);
  // A scheduled change, a new price, an organization price, an availability change, and two
  // entries that restate what is recorded (the sample's storage.gp1 and storage.io1's availability).
  const book = {
    products: [
      { product_key: 'storage.st1', on_sale: true },
      { product_key: 'storage.io1', on_sale: false },
    ],
    prices: [
      price('compute.g2.8', '0.1100', { valid_from: at }),
      price('compute.d1.1', '0.5000', { valid_from: at, valid_until: later }),
      price('storage.gp1', '0.0400', { organization_id: 'org_7', valid_from: at }),
      price('storage.gp1', '0.0480', { valid_from: '2026-01-01T00:00:00Z' }),
    ],
  };
  let file: string;
  beforeAll(async () => {
    await applyBook(f.dataSource, await sampleBook());
    file = await f.bookFile(book);
  });

  it('prints one line per change and a summary, writes nothing, with the flag before or after the file', async () => {
    const before = await dumpDatabase(f.dataSource);
    const [after, first] = await inParallel([
      () => f.cli('import', file, '--dry-run'),
      () => f.cli('--dry-run', 'import', file),
    ]);
    expect(await dumpDatabase(f.dataSource)).toBe(before);
    for (const result of [after, first]) {
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(result.stdout.split('\n').slice(-2)).toEqual([
        expect.stringMatching(
          /^dry run at \S+Z: 3 prices set, 1 ended, 1 availability changes, 2 unchanged; nothing was written$/,
        ),
        '',
      ]);
    }
    expect(linesOf(first)).toBe(linesOf(after));
    expect(planLines(after.stdout)).toEqual([
      'on-sale   storage.st1   -',
      `new       compute.d1.1  list       0.5000 per 3600 seconds from ${at} until ${later}`,
      `end       compute.g2.8  list       0.1220 per 3600 seconds from 2026-01-01T00:00:00Z ends at ${at}`,
      `change    compute.g2.8  list       0.1100 per 3600 seconds from ${at}, ending 0.1220 from 2026-01-01T00:00:00Z`,
      `new       storage.gp1   org:org_7  0.0400 per 730 gib_hours from ${at}`,
    ]);
  });

  it('import then prints the same lines for what it did, and a dry run of the same book finds nothing to do', async () => {
    const dryRun = await f.cli('import', '--dry-run', file);
    const applied = await f.cli('import', file);
    expectApplied(applied);
    expect(linesOf(applied)).toBe(linesOf(dryRun));
    expect(applied.stdout).toMatch(/: 3 prices set, 1 ended, 1 availability changes, 2 unchanged \(version 3\)\n$/);
    const dump = await dumpDatabase(f.dataSource);
    const again = await f.cli('import', file, '--dry-run');
    expect(again).toEqual({
      code: 0,
      stdout: `nothing to change: everything in ${file} is already recorded (dry run)\n`,
      stderr: '',
    });
    expect(await dumpDatabase(f.dataSource)).toBe(dump);
  });

  it('--json prints the plan as JSON, for a dry run and for an import', async () => {
    const next = {
      prices: [price('compute.d2.1', '2', { valid_from: at }), price('compute.d1.1', '0.6000', { valid_from: later })],
    };
    const nextFile = await f.bookFile(next);
    const dump = await dumpDatabase(f.dataSource);
    const dryRun = await f.cli('import', nextFile, '--dry-run', '--json');
    expect(await dumpDatabase(f.dataSource)).toBe(dump);
    const applied = await f.cli('import', '--json', nextFile);
    for (const result of [dryRun, applied])
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const planned = JSON.parse(dryRun.stdout) as Record<string, unknown>;
    const done = JSON.parse(applied.stdout) as Record<string, unknown>;
    expect(planned).toMatchObject({
      dry_run: true,
      version: '3',
      summary: { prices_set: 2, ended: 0, availability_changes: 0, unchanged: 0 },
    });
    expect(done).toMatchObject({ dry_run: false, version: '4' });
    expect(done.changes).toEqual(planned.changes);
    // compute.d1.1 ended at 60 days by its own window: the new price follows it, ending nothing.
    expect(planned.changes).toEqual([
      expect.objectContaining({
        change: 'new',
        product_key: 'compute.d1.1',
        amount: '0.6000',
        valid_from: later,
        valid_until: null,
      }),
      {
        change: 'new',
        product_key: 'compute.d2.1',
        organization_id: null,
        unit_type: 'seconds',
        unit_count: 3600,
        amount: '2',
        valid_from: at,
        valid_until: null,
      },
    ]);
  });

  it('refuses a book exactly as import refuses it: same message, exit 3, nothing written', async () => {
    const refused = await f.bookFile({
      prices: [price('compute.g2.2', '0.0300', { valid_from: '2026-02-01T00:00:00Z' }), price('compute.d3.1', '1')],
    });
    const byImport = await f.expectRefused(
      ['import', refused],
      'prices[0].valid_from: 2026-02-01T00:00:00Z is in the past',
    );
    const byDryRun = await f.expectRefused(['import', '--dry-run', refused], 'prices[0].valid_from');
    expect(byDryRun.stderr).toBe(byImport.stderr);
    const malformed = await f.bookFile({ prices: [price('compute.d3.1', '01.5')] });
    expect((await f.expectRefused(['import', malformed, '--dry-run'], 'prices[0].amount: "01.5"')).stderr).toBe(
      (await f.expectRefused(['import', malformed], 'prices[0].amount')).stderr,
    );
  });

  it('writes nothing, so a constraint only the database holds is refused by the import, not by its dry run', async () => {
    await f.dataSource.query(`ALTER TABLE price_record ADD CONSTRAINT test_amount_below_1000 CHECK (amount < 1000)`);
    try {
      const expensive = await f.bookFile({ prices: [price('compute.d4.1', '5000')] });
      const dump = await dumpDatabase(f.dataSource);
      const planned = await f.cli('import', '--dry-run', expensive);
      expect(planned.code).toBe(0);
      expect(planned.stdout).toMatch(/: 1 prices set, .*; nothing was written\n$/);
      expect(await dumpDatabase(f.dataSource)).toBe(dump);
      await f.expectRefused(['import', expensive], 'test_amount_below_1000', { code: 1 });
    } finally {
      await f.dataSource.query(`ALTER TABLE price_record DROP CONSTRAINT test_amount_below_1000`);
    }
  });
});
