import { dumpDatabase } from '../support/database';
import { expectApplied, expectImportsChangeNothing, expectNothingToChange, inDays } from '../support/price-book-cli';
import {
  planLines,
  price,
  recordsOf,
  SAMPLE,
  sampleBook,
  useCliDatabase,
  versionOf,
  withoutLockWaits,
} from '../support/price-book-cli';

// Imports of price books (`import <file>`): the sample book, backfills and scheduled changes, organization prices, availability, and concurrent imports.

describe('import of the sample book', () => {
  const f = useCliDatabase();

  it('loads the sample book into an empty database', async () => {
    expect(await versionOf(f.dataSource)).toBe('1');
    const result = await f.cli('import', SAMPLE);
    expectApplied(result);
    // 21 prices; storage.io1 and storage.st1 are already not on sale (the migration).
    // The two products restate what the migration set.
    expect(result.stdout).toMatch(/: 21 prices set, 0 ended, 0 availability changes, 2 unchanged \(version 2\)\n$/);
    expect(planLines(result.stdout)).toHaveLength(21);
    expect(result.stdout).toContain(
      'new       compute.g2.4                   list  0.0610 per 3600 seconds from 2026-01-01T00:00:00Z until 2027-01-01T00:00:00Z\n' +
        'new       compute.g2.4                   list  0.0590 per 3600 seconds from 2027-01-01T00:00:00Z\n',
    );
    expect(await versionOf(f.dataSource)).toBe('2');

    const count: { n: number }[] = await f.dataSource.query(`SELECT count(*)::int AS n FROM price_record`);
    expect(count[0].n).toBe(21);
    const ingested = await recordsOf(f.dataSource, 'observability.ingested_sample');
    expect(ingested).toHaveLength(1);
    expect(ingested[0]).toMatchObject({ unit_type: 'samples', unit_count: 1000000, amount: '0.000012' });
    expect((await recordsOf(f.dataSource, 'network.vpc_ingress'))[0].amount).toBe('0');
    expect((await recordsOf(f.dataSource, 'storage.gp1'))[0].amount).toBe('0.0480');

    // compute.g2.4 has a scheduled change on 2027-01-01: the first price ends there and links to it.
    const g24 = await recordsOf(f.dataSource, 'compute.g2.4');
    expect(g24.map((r) => [r.amount, r.valid_from.toISOString(), r.valid_until?.toISOString() ?? null])).toEqual([
      ['0.0610', '2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
      ['0.0590', '2027-01-01T00:00:00.000Z', null],
    ]);
    expect(g24[0].superseded_by).toBe(g24[1].id);
    expect(g24[1].superseded_by).toBeNull();

    const availability: { product_key: string; on_sale: boolean }[] = await f.dataSource.query(
      `SELECT product_key, on_sale FROM product_availability ORDER BY product_key`,
    );
    expect(availability).toEqual([
      { product_key: 'storage.io1', on_sale: false },
      { product_key: 'storage.st1', on_sale: false },
    ]);
  });

  it('importing the sample book again changes nothing', async () => {
    const before = await dumpDatabase(f.dataSource);
    expectNothingToChange(await f.cli('import', SAMPLE));
    expect(await dumpDatabase(f.dataSource)).toBe(before);
    expect(await versionOf(f.dataSource)).toBe('2');
  });
});

describe('valid_from in the past: a first load or a backfill only', () => {
  const f = useCliDatabase();
  beforeAll(async () => {
    expectApplied(
      await f.import({
        prices: [
          price('compute.p1.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' }),
          price('compute.p9.1', '1.00', { organization_id: 'org_a', valid_from: '2020-01-01T00:00:00Z' }),
        ],
      }),
    );
  });

  it('refuses a past valid_from for a key that has a list price', async () => {
    await f.expectRefused(
      ['import', await f.bookFile({ prices: [price('compute.p1.1', '2.00', { valid_from: '2021-01-01T00:00:00Z' })] })],
      'prices[0].valid_from: 2021-01-01T00:00:00Z is in the past and list price compute.p1.1 already has prices',
    );
  });

  it('refuses a past window before the first record of a key that has a list price', async () => {
    await f.expectRefused(
      [
        'import',
        await f.bookFile({
          prices: [
            price('compute.p1.1', '0.50', { valid_from: '2019-01-01T00:00:00Z', valid_until: '2020-01-01T00:00:00Z' }),
          ],
        }),
      ],
      'prices[0].valid_from: 2019-01-01T00:00:00Z is in the past',
    );
  });

  it('refuses a past valid_from for a key that has a price in the same organization', async () => {
    await f.expectRefused(
      [
        'import',
        await f.bookFile({
          prices: [price('compute.p9.1', '2.00', { organization_id: 'org_a', valid_from: '2021-01-01T00:00:00Z' })],
        }),
      ],
      'prices[0].valid_from: 2021-01-01T00:00:00Z is in the past and compute.p9.1 for organization org_a already has prices',
    );
  });

  it('accepts a backfill into a key without records, history included', async () => {
    const result = await f.import({
      prices: [
        price('compute.p2.1', '1.50', { valid_from: '2021-01-01T00:00:00Z' }),
        price('compute.p2.1', '1.00', { valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' }),
      ],
    });
    expectApplied(result);
    expect(result.stdout).toContain(': 2 prices set, 0 ended, 0 availability changes');
    const rows = await recordsOf(f.dataSource, 'compute.p2.1');
    expect(rows.map((r) => [r.amount, r.valid_from.toISOString(), r.valid_until?.toISOString() ?? null])).toEqual([
      ['1.00', '2020-01-01T00:00:00.000Z', '2021-01-01T00:00:00.000Z'],
      ['1.50', '2021-01-01T00:00:00.000Z', null],
    ]);
  });

  it('accepts a backfill of an organization price while the list scope has records, and of another organization', async () => {
    expectApplied(
      await f.import({
        prices: [
          price('compute.p1.1', '0.80', { organization_id: 'org_a', valid_from: '2020-06-01T00:00:00Z' }),
          price('compute.p9.1', '0.90', { organization_id: 'org_b', valid_from: '2020-06-01T00:00:00Z' }),
        ],
      }),
    );
    expect((await recordsOf(f.dataSource, 'compute.p1.1', 'org_a')).map((r) => r.amount)).toEqual(['0.80']);
    expect((await recordsOf(f.dataSource, 'compute.p9.1', 'org_b')).map((r) => r.amount)).toEqual(['0.90']);
    // The list price is untouched by the organization's.
    const list = await recordsOf(f.dataSource, 'compute.p1.1');
    expect(list.map((r) => [r.amount, r.valid_until])).toEqual([['1.00', null]]);
  });

  it('accepts a backfill of a list price while an organization has records for that key', async () => {
    expectApplied(await f.import({ prices: [price('compute.p9.1', '1.10', { valid_from: '2019-01-01T00:00:00Z' })] }));
    expect((await recordsOf(f.dataSource, 'compute.p9.1')).map((r) => r.amount)).toEqual(['1.10']);
  });
});

describe('scheduled price changes', () => {
  const f = useCliDatabase({
    prices: [
      price('compute.s1.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' }),
      price('compute.s2.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' }),
    ],
  });

  it('a new price from a future instant ends the open price at that instant', async () => {
    const at = inDays(40);
    const book = {
      prices: [
        price('compute.s1.1', '1.00', { valid_from: '2020-01-01T00:00:00Z', valid_until: null }),
        price('compute.s1.1', '1.20', { valid_from: at, valid_until: null }),
      ],
    };
    const before = await versionOf(f.dataSource);
    const result = await f.import(book);
    expectApplied(result);
    expect(result.stdout).toContain(': 1 prices set, 1 ended, 0 availability changes, 1 unchanged');
    expect(planLines(result.stdout)).toEqual([
      'end       compute.s1.1  list  1.00 per 3600 seconds from 2020-01-01T00:00:00Z ends at ' + at,
      `change    compute.s1.1  list  1.20 per 3600 seconds from ${at}, ending 1.00 from 2020-01-01T00:00:00Z`,
    ]);
    expect(await versionOf(f.dataSource)).toBe(String(Number(before) + 1));

    const rows = await recordsOf(f.dataSource, 'compute.s1.1');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ amount: '1.00', valid_until: new Date(at), superseded_by: rows[1].id });
    expect(rows[1]).toMatchObject({ amount: '1.20', valid_from: new Date(at), valid_until: null, superseded_by: null });

    const changes: { change: string; price_record_id: string }[] = await f.dataSource.query(
      `SELECT change, price_record_id::text FROM price_change WHERE product_key = 'compute.s1.1' ORDER BY id`,
    );
    expect(changes).toEqual(
      expect.arrayContaining([
        { change: 'set', price_record_id: rows[1].id },
        { change: 'end', price_record_id: rows[0].id },
      ]),
    );

    // The same book again, and the scheduled price alone, change nothing.
    await expectImportsChangeNothing(f, book, { prices: [book.prices[1]] });
  });

  it('a scheduled price with no end can itself be ended by a later scheduled price', async () => {
    const first = inDays(10);
    const second = inDays(20);
    expectApplied(await f.import({ prices: [price('compute.s2.1', '2.00', { valid_from: first })] }));
    expectApplied(await f.import({ prices: [price('compute.s2.1', '3.00', { valid_from: second })] }));
    const rows = await recordsOf(f.dataSource, 'compute.s2.1');
    expect(rows.map((r) => [r.amount, r.valid_until?.getTime() ?? null, r.superseded_by])).toEqual([
      ['1.00', Date.parse(first), rows[1].id],
      ['2.00', Date.parse(second), rows[2].id],
      ['3.00', null, null],
    ]);
  });

  it('several changes of one key in one book apply in valid_from order, whatever the order in the file', async () => {
    const a = inDays(5);
    const b = inDays(6);
    expectApplied(
      await f.import({
        prices: [
          price('compute.s3.1', '3.00', { valid_from: b }),
          price('compute.s3.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' }),
          price('compute.s3.1', '2.00', { valid_from: a }),
        ],
      }),
    );
    const rows = await recordsOf(f.dataSource, 'compute.s3.1');
    expect(rows.map((r) => [r.amount, r.valid_until?.getTime() ?? null, r.superseded_by])).toEqual([
      ['1.00', Date.parse(a), rows[1].id],
      ['2.00', Date.parse(b), rows[2].id],
      ['3.00', null, null],
    ]);
  });
});

describe('an omitted valid_from means now', () => {
  const f = useCliDatabase({ prices: [price('compute.n2.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' })] });

  /** The instant a run says it applied at: the write's publication instant, after the CLI exits. */
  const appliedAt = (stdout: string): number => Date.parse(/applied at (\S+):/.exec(stdout)![1]);

  it('a first price without valid_from starts at the write’s publication instant, after the run; restating it changes nothing', async () => {
    const book = { prices: [price('compute.n1.1', '0.70')] };
    const start = Date.now();
    const result = await f.import(book);
    expectApplied(result);
    const rows = await recordsOf(f.dataSource, 'compute.n1.1');
    expect(rows).toHaveLength(1);
    expect(rows[0].valid_from.getTime()).toBe(appliedAt(result.stdout));
    expect(rows[0].valid_from.getTime()).toBeGreaterThan(start);
    expect(rows[0].valid_until).toBeNull();

    await expectImportsChangeNothing(f, book);
  });

  it('a change of an existing price without valid_from starts at the write’s instant and ends the price in force then', async () => {
    const book = { prices: [price('compute.n2.1', '1.25')] };
    const start = Date.now();
    const result = await f.import(book);
    expectApplied(result);
    expect(result.stdout).toContain(': 1 prices set, 1 ended, 0 availability changes');
    const rows = await recordsOf(f.dataSource, 'compute.n2.1');
    expect(rows).toHaveLength(2);
    expect(rows[1].valid_from.getTime()).toBe(appliedAt(result.stdout));
    expect(rows[1].valid_from.getTime()).toBeGreaterThan(start);
    expect(rows[0]).toMatchObject({ amount: '1.00', valid_until: rows[1].valid_from, superseded_by: rows[1].id });
    expect(rows[1]).toMatchObject({ amount: '1.25', valid_until: null });

    await expectImportsChangeNothing(f, book);
  });
});

describe('organization prices are their own scope', () => {
  const f = useCliDatabase(sampleBook);

  it('an organization price is recorded apart from the list price, and changes of it leave the list price alone', async () => {
    const book = {
      prices: [
        price('storage.gp1', '0.0400', { organization_id: 'org_42', valid_from: '2026-06-01T00:00:00Z' }),
        price('storage.gp1', '0.0350', { organization_id: 'org_42', valid_from: inDays(60) }),
      ],
    };
    const result = await f.import(book);
    expectApplied(result);
    expect(result.stdout).toContain(': 2 prices set, 0 ended');
    const org = await recordsOf(f.dataSource, 'storage.gp1', 'org_42');
    expect(org.map((r) => [r.amount, r.valid_until?.getTime() ?? null, r.superseded_by])).toEqual([
      ['0.0400', Date.parse(book.prices[1].valid_from as string), org[1].id],
      ['0.0350', null, null],
    ]);
    const list = await recordsOf(f.dataSource, 'storage.gp1');
    expect(list.map((r) => [r.amount, r.valid_until, r.superseded_by])).toEqual([['0.0480', null, null]]);

    await expectImportsChangeNothing(f, book);
  });

  it('a list price change leaves the organization price alone', async () => {
    const at = inDays(90);
    expectApplied(await f.import({ prices: [price('storage.gp1', '0.0500', { valid_from: at })] }));
    const list = await recordsOf(f.dataSource, 'storage.gp1');
    expect(list.map((r) => [r.amount, r.valid_until?.getTime() ?? null])).toEqual([
      ['0.0480', Date.parse(at)],
      ['0.0500', null],
    ]);
    const org = await recordsOf(f.dataSource, 'storage.gp1', 'org_42');
    expect(org.map((r) => r.amount)).toEqual(['0.0400', '0.0350']);
    expect(org[1].valid_until).toBeNull();
  });

  it('organization prices never appear in `show`', async () => {
    const result = await f.cli('show');
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout) as { families: { prices: { product_key: string }[] }[] };
    const gp1 = doc.families.flatMap((family) => family.prices).filter((p) => p.product_key === 'storage.gp1');
    expect(gp1).toEqual([expect.objectContaining({ amount: '0.0480' })]);
  });
});

describe('products: availability', () => {
  // compute.g2.64 is priced: availability is set for a product (test/cli/availability.e2e-spec.ts).
  const f = useCliDatabase({ prices: [price('compute.g2.64', '1.00', { valid_from: '2026-01-01T00:00:00Z' })] });

  async function availability(): Promise<Record<string, boolean>> {
    const rows: { product_key: string; on_sale: boolean }[] = await f.dataSource.query(
      `SELECT product_key, on_sale FROM product_availability ORDER BY product_key`,
    );
    return Object.fromEntries(rows.map((r) => [r.product_key, r.on_sale]));
  }

  it('restating the availability the migration set changes nothing', async () => {
    const dump = await dumpDatabase(f.dataSource);
    expectNothingToChange(
      await f.import({
        products: [
          { product_key: 'storage.io1', on_sale: false },
          { product_key: 'storage.st1', on_sale: false },
          { product_key: 'compute.g2.64', on_sale: true },
        ],
      }),
    );
    expect(await dumpDatabase(f.dataSource)).toBe(dump);
  });

  it('products entries change availability; restating them changes nothing', async () => {
    const book = {
      products: [
        { product_key: 'storage.io1', on_sale: true },
        { product_key: 'compute.g2.64', on_sale: false },
      ],
    };
    const result = await f.import(book);
    expectApplied(result);
    expect(result.stdout).toContain(': 0 prices set, 0 ended, 2 availability changes');
    expect(await availability()).toEqual({ 'compute.g2.64': false, 'storage.io1': true, 'storage.st1': false });
    const changes: { product_key: string; change: string }[] = await f.dataSource.query(
      `SELECT product_key, change FROM price_change WHERE change = 'availability' ORDER BY product_key`,
    );
    // Beside the rows of the initial availability (InitialAvailabilityLogged1764000012100), one per change.
    expect(changes).toEqual([
      { product_key: 'compute.g2.64', change: 'availability' },
      { product_key: 'storage.io1', change: 'availability' },
      { product_key: 'storage.io1', change: 'availability' },
      { product_key: 'storage.st1', change: 'availability' },
    ]);

    await expectImportsChangeNothing(f, book);
  });
});

describe('concurrent imports never interleave', () => {
  const f = useCliDatabase({ prices: [price('compute.c1.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' })] });

  it('of two conflicting books run at once, one applies and the other is refused by the rules, not the database', async () => {
    // Each alone ends the open price; after either, the other overlaps a closed window.
    const a = await f.bookFile({
      prices: [price('compute.c1.1', '2.00', { valid_from: inDays(10), valid_until: inDays(30) })],
    });
    const b = await f.bookFile({
      prices: [price('compute.c1.1', '3.00', { valid_from: inDays(20), valid_until: inDays(40) })],
    });
    const results = await Promise.all([f.cli('import', a), f.cli('import', b)]);
    const codes = results.map((r) => r.code).sort();
    expect(codes).toEqual([0, 3]);
    const refused = results.find((r) => r.code === 3)!;
    expect(withoutLockWaits(refused.stderr)).toMatch(
      /^refused, nothing was written:\n {2}prices\[0\]: overlaps the recorded price/,
    );
    const rows = await recordsOf(f.dataSource, 'compute.c1.1');
    expect(rows).toHaveLength(2);
    expect(rows[0].valid_until).toEqual(rows[1].valid_from);
    expect(rows[0].superseded_by).toBe(rows[1].id);
  });

  it('two books run at once both apply, one after the other', async () => {
    const version = Number(await versionOf(f.dataSource));
    const books = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        f.bookFile({ prices: [price(`compute.c2.${n}`, `${n}.00`, { valid_from: '2020-01-01T00:00:00Z' })] }),
      ),
    );
    const results = await Promise.all(books.map((file) => f.cli('import', file)));
    for (const result of results) expectApplied(result);
    const versions = results.map((r) => Number(/\(version (\d+)\)/.exec(r.stdout)![1])).sort((a, b) => a - b);
    expect(versions).toEqual([version + 1, version + 2, version + 3, version + 4]);
    for (const n of [1, 2, 3, 4]) {
      expect((await recordsOf(f.dataSource, `compute.c2.${n}`)).map((r) => r.amount)).toEqual([`${n}.00`]);
    }
  });
});
