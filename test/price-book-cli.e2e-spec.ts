import { PriceBookService } from '@app/pricing';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type Notification } from 'pg';
import request from 'supertest';
import { CLI, REGISTER, runCommand, spawnCli, type CliResult } from './support/cli';
import { FAMILY_ORDER } from './support/contract';
import { applyBook, dumpDatabase, TEST_ACTOR } from './support/database';
import {
  EMPTY_BOOK,
  expectApplied,
  expectImportsChangeNothing,
  expectNothingToChange,
  inDays,
  inParallel,
  linesOf,
  planLines,
  price,
  recordsOf,
  SAMPLE,
  sampleBook,
  useCliDatabase,
  versionOf,
} from './support/price-book-cli';
import { startTestApp } from './support/test-app';

// End-to-end tests of the price book CLI (docs/price-book-cli.md), each describe on a database of
// its own (useCliDatabase). Every refusal is checked to leave the database as it was.

const CHANNEL = 'pricing_price_book_changed';

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

describe('refused price books: exit 1, the entry named, nothing written', () => {
  const f = useCliDatabase();
  const good = (key: string) => price(key, '0.0100', { valid_from: inDays(30) });

  // Each bad entry is the fourth of the book (prices[3]), after three good ones; its message follows
  // "prices[3]".
  const x1 = (amount: string, extra?: Record<string, unknown>) => price('compute.x1.1', amount, extra);
  const Y2030 = '2030-01-01T00:00:00Z';
  const badEntries: [string, Record<string, unknown>, string][] = [
    ['amount as a JSON number', x1('', { amount: 0.05 }), '.amount: must be a JSON string'],
    ['amount with a minus sign', x1('-0.05'), '.amount: "-0.05" is not a decimal amount'],
    ['amount with a plus sign', x1('+0.05'), '.amount: "+0.05" is not a decimal amount'],
    ['amount with an exponent', x1('1e-3'), '.amount: "1e-3" is not a decimal amount'],
    ['amount with leading zeros', x1('00.5'), '.amount: "00.5" is not a decimal amount'],
    ['amount with a leading zero', x1('05'), '.amount: "05" is not a decimal amount'],
    ['empty amount', x1(''), '.amount: "" is not a decimal amount'],
    ['amount with a bare point', x1('1.'), '.amount: "1." is not a decimal amount'],
    ['amount without integer part', x1('.5'), '.amount: ".5" is not a decimal amount'],
    ['amount with spaces', x1(' 0.5'), '.amount: " 0.5" is not a decimal amount'],
    ['amount "NaN"', x1('NaN'), '.amount: "NaN" is not a decimal amount'],
    ['missing amount', { product_key: 'compute.x1.1', unit_type: 'seconds', unit_count: 3600 }, '.amount:'],
    ['unit_count 0', x1('1', { unit_count: 0 }), '.unit_count: must be a positive'],
    ['negative unit_count', x1('1', { unit_count: -3600 }), '.unit_count: must be'],
    ['fractional unit_count', x1('1', { unit_count: 1.5 }), '.unit_count: must be'],
    ['unit_count as a string', x1('1', { unit_count: '3600' }), '.unit_count: must be'],
    [
      'wrong unit type for the family',
      x1('1', { unit_type: 'gib_hours' }),
      '.unit_type: family compute_instance is billed in seconds, not gib_hours',
    ],
    [
      'a storage class billed in gb',
      price('storage.gp1', '1', { unit_type: 'gb' }),
      '.unit_type: family storage_volume is billed in gib_hours, not gb',
    ],
    ['unknown unit type', x1('1', { unit_type: 'hours' }), '.unit_type: must be one of'],
    ['upper-case instance type', price('compute.G2', '1'), '.product_key: "compute.G2" is not compute.'],
    ['undotted instance type', price('compute.g2', '1'), '.product_key: "compute.g2" is not compute.'],
    ['unknown storage class', price('storage.xx1', '1'), '.product_key: "storage.xx1" has no storage class'],
    ['unknown family', price('foo.bar', '1'), '.product_key: "foo.bar" fits no product family'],
    ['missing product key', { unit_type: 'seconds', unit_count: 1, amount: '1' }, '.product_key: must be'],
    ['unknown field', x1('1', { currency: 'EUR' }), ': unknown field "currency"'],
    [
      'valid_until equal to valid_from',
      x1('1', { valid_from: Y2030, valid_until: Y2030 }),
      '.valid_until: must be after valid_from',
    ],
    [
      'valid_until before valid_from',
      x1('1', { valid_from: Y2030, valid_until: '2029-01-01T00:00:00Z' }),
      '.valid_until: must be after valid_from',
    ],
    [
      'valid_from without offset',
      x1('1', { valid_from: '2030-01-01T00:00:00' }),
      '.valid_from: must be an RFC 3339 timestamp with an offset',
    ],
    [
      'valid_until without offset',
      x1('1', { valid_from: Y2030, valid_until: '2031-01-01 00:00:00' }),
      '.valid_until: must be an RFC 3339 timestamp with an offset',
    ],
    ['valid_from as a date only', x1('1', { valid_from: '2030-01-01' }), '.valid_from: must be an RFC 3339'],
    ['valid_from as a JSON number', x1('1', { valid_from: 1893456000000 }), '.valid_from: must be an RFC 3339'],
    ['organization_id of a bad shape', x1('1', { organization_id: 'org 42' }), '.organization_id: must be'],
  ];

  // The bad books are imported concurrently (the CLI takes a while to start); none may write, so
  // the database after all of them must be byte-for-byte the database before.
  let dumpBefore: string;
  let dumpAfter: string;
  let refusals: CliResult[];
  beforeAll(async () => {
    await applyBook(f.dataSource, await sampleBook());
    const files = await Promise.all(
      badEntries.map(([, bad]) =>
        f.bookFile({ prices: [good('compute.x2.1'), good('compute.x2.2'), good('compute.x2.4'), bad] }),
      ),
    );
    dumpBefore = await dumpDatabase(f.dataSource);
    refusals = await inParallel(files.map((file) => () => f.cli('import', file)));
    dumpAfter = await dumpDatabase(f.dataSource);
  }, 180_000);

  it.each(badEntries.map((entry, index) => [...entry, index] as const))('refuses %s', (_name, _bad, message, index) => {
    const result = refusals[index];
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/: refused, nothing was written:\n/);
    expect(result.stderr).toContain(`prices[3]${message}`);
    // Only the bad entry is named.
    expect(result.stderr).not.toMatch(/prices\[[012]\]/);
  });

  it('none of those bad books wrote anything', () => {
    expect(dumpAfter).toBe(dumpBefore);
    expect(dumpAfter).toContain('{"singleton":true,"version":2,"record_count":21}');
  });

  it('refuses malformed JSON', async () => {
    const file = await f.bookFile('{ "prices": [ { "product_key": "compute.x1.1", } ] }');
    await f.expectRefused(['import', file], `${file} is not valid JSON`);
  });

  it('refuses a missing file', async () => {
    const file = join(f.dir, 'no-such-book.json');
    await f.expectRefused(['import', file], `cannot read ${file}: no such file`);
  });

  it('refuses a book that is not an object, and an unknown top-level field', async () => {
    await f.expectRefused(['import', await f.bookFile('[]')], 'price book: must be a JSON object');
    await f.expectRefused(['import', await f.bookFile({ prices: [], currency: 'EUR' })], 'unknown field "currency"');
    await f.expectRefused(['import', await f.bookFile({ prices: {} })], 'prices: must be an array');
  });

  it('refuses bad products entries, naming them', async () => {
    await f.expectRefused(
      ['import', await f.bookFile({ products: [{ product_key: 'storage.gp1', on_sale: 'no' }] })],
      'products[0].on_sale: must be true or false',
    );
    await f.expectRefused(
      ['import', await f.bookFile({ products: [{ product_key: 'storage.gp9', on_sale: false }] })],
      'products[0].product_key: "storage.gp9" has no storage class',
    );
    await f.expectRefused(
      [
        'import',
        await f.bookFile({
          products: [
            { product_key: 'storage.gp1', on_sale: false },
            { product_key: 'storage.gp1', on_sale: true },
          ],
        }),
      ],
      'products[1].product_key: "storage.gp1" is already listed at products[0]',
    );
  });

  it('writes nothing, not even the good entries, when one entry is bad; every bad entry is named', async () => {
    const file = await f.bookFile({
      products: [{ product_key: 'storage.gp1', on_sale: false }],
      prices: [good('compute.y1.1'), price('compute.y1.2', '0.5.1'), good('compute.y1.4'), price('foo.bar', '1')],
    });
    const result = await f.expectRefused(['import', file], 'refused, nothing was written');
    expect(result.stderr).toContain('prices[1].amount: "0.5.1" is not a decimal amount');
    expect(result.stderr).toContain('prices[3].product_key: "foo.bar"');
    expect(result.stderr).not.toContain('prices[0]');
    expect(await recordsOf(f.dataSource, 'compute.y1.1')).toEqual([]);
  });

  it('writes nothing when a good entry comes with one the plan refuses (a change to the past)', async () => {
    const file = await f.bookFile({
      prices: [good('compute.y2.1'), price('storage.gp1', '0.0470', { valid_from: '2026-02-01T00:00:00Z' })],
    });
    await f.expectRefused(['import', file], /prices\[1\]\.valid_from: 2026-02-01T00:00:00Z is in the past/);
    expect(await recordsOf(f.dataSource, 'compute.y2.1')).toEqual([]);
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

  it('a first price without valid_from starts within the CLI run; restating it changes nothing', async () => {
    const book = { prices: [price('compute.n1.1', '0.70')] };
    const start = Date.now();
    expectApplied(await f.import(book));
    const end = Date.now();
    const rows = await recordsOf(f.dataSource, 'compute.n1.1');
    expect(rows).toHaveLength(1);
    expect(rows[0].valid_from.getTime()).toBeGreaterThanOrEqual(start - 1);
    expect(rows[0].valid_from.getTime()).toBeLessThanOrEqual(end);
    expect(rows[0].valid_until).toBeNull();

    await expectImportsChangeNothing(f, book);
  });

  it('a change of an existing price without valid_from starts now and ends the price in force now', async () => {
    const book = { prices: [price('compute.n2.1', '1.25')] };
    const start = Date.now();
    const result = await f.import(book);
    const end = Date.now();
    expectApplied(result);
    expect(result.stdout).toContain(': 1 prices set, 1 ended, 0 availability changes');
    const rows = await recordsOf(f.dataSource, 'compute.n2.1');
    expect(rows).toHaveLength(2);
    expect(rows[1].valid_from.getTime()).toBeGreaterThanOrEqual(start - 1);
    expect(rows[1].valid_from.getTime()).toBeLessThanOrEqual(end);
    expect(rows[0]).toMatchObject({ amount: '1.00', valid_until: rows[1].valid_from, superseded_by: rows[1].id });
    expect(rows[1]).toMatchObject({ amount: '1.25', valid_until: null });

    await expectImportsChangeNothing(f, book);
  });
});

describe('overlaps other than a scheduled change are refused', () => {
  const closedUntil = inDays(100);
  const scheduledAt = inDays(50);
  const f = useCliDatabase({
    prices: [
      price('compute.o1.1', '1.00', { valid_from: '2020-01-01T00:00:00Z', valid_until: closedUntil }),
      price('compute.o2.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' }),
      price('compute.o2.1', '2.00', { valid_from: scheduledAt }),
      price('compute.o3.1', '1.00', {
        organization_id: 'org_a',
        valid_from: '2020-01-01T00:00:00Z',
        valid_until: closedUntil,
      }),
    ],
  });

  it('refuses a new price inside a closed window', async () => {
    const file = await f.bookFile({ prices: [price('compute.o1.1', '1.10', { valid_from: inDays(10) })] });
    await f.expectRefused(['import', file], /prices\[0\]: overlaps the recorded price 1\.00 per 3600 seconds from/);
  });

  it('refuses a new closed window that starts before a closed window and runs into it', async () => {
    // compute.o1.1 ends in 100 days: a price from 120 days is fine, one from 90 days overlaps.
    const file = await f.bookFile({
      prices: [
        price('compute.o1.1', '1.10', { valid_from: inDays(90), valid_until: inDays(120) }),
        price('compute.o2.1', '9.00', { valid_from: inDays(200) }),
      ],
    });
    await f.expectRefused(['import', file], 'prices[0]: overlaps');
    expect((await recordsOf(f.dataSource, 'compute.o2.1')).map((r) => r.amount)).toEqual(['1.00', '2.00']);
  });

  it('refuses a new price that would end an open price but overlaps a scheduled one too', async () => {
    const file = await f.bookFile({ prices: [price('compute.o2.1', '1.50', { valid_from: inDays(20) })] });
    const result = await f.expectRefused(['import', file], 'prices[0]: overlaps');
    expect(result.stderr).toContain(' and the recorded price 2.00');
  });

  it('refuses a scheduled price with an end that runs into the next scheduled price', async () => {
    const file = await f.bookFile({
      prices: [price('compute.o2.1', '1.50', { valid_from: inDays(20), valid_until: inDays(60) })],
    });
    await f.expectRefused(['import', file], 'prices[0]: overlaps');
  });

  it('refuses two entries of one book with the same key, scope and valid_from', async () => {
    const at = inDays(30);
    const file = await f.bookFile({
      prices: [price('compute.o4.1', '1.00', { valid_from: at }), price('compute.o4.1', '1.10', { valid_from: at })],
    });
    await f.expectRefused(['import', file], /prices\[1\]: overlaps the price 1\.00 per 3600 seconds from/);
  });

  it('refuses two overlapping organization prices, but not a list price overlapping an organization price', async () => {
    await f.expectRefused(
      [
        'import',
        await f.bookFile({
          prices: [
            price('compute.o3.1', '0.90', {
              organization_id: 'org_a',
              valid_from: inDays(10),
              valid_until: inDays(20),
            }),
          ],
        }),
      ],
      `prices[0]: overlaps the recorded price 1.00 per 3600 seconds from 2020-01-01T00:00:00Z until ${closedUntil} of compute.o3.1 for organization org_a`,
    );
    // The list scope of compute.o3.1 has no records: a list price for all time is fine.
    expectApplied(await f.import({ prices: [price('compute.o3.1', '1.20', { valid_from: '2020-01-01T00:00:00Z' })] }));
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
  const f = useCliDatabase();

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
          { product_key: 'storage.gp1', on_sale: true },
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
      `SELECT product_key, change FROM price_change ORDER BY product_key`,
    );
    expect(changes).toEqual([
      { product_key: 'compute.g2.64', change: 'availability' },
      { product_key: 'storage.io1', change: 'availability' },
    ]);

    await expectImportsChangeNothing(f, book);
  });
});

describe('withdraw', () => {
  const scheduledAt = inDays(30);
  const scheduledEnd = inDays(45);
  const orgScheduledAt = inDays(35);
  const f = useCliDatabase({
    prices: [
      price('compute.w1.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' }),
      price('compute.w1.1', '2.00', { valid_from: scheduledAt }),
      price('compute.w2.1', '1.00', { valid_from: '2020-01-01T00:00:00Z', valid_until: scheduledEnd }),
      price('compute.w3.1', '1.00', { valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' }),
      price('compute.w1.1', '0.90', { organization_id: 'org_42', valid_from: '2020-01-01T00:00:00Z' }),
      price('compute.w1.1', '0.80', { organization_id: 'org_42', valid_from: orgScheduledAt }),
      price('compute.w4.1', '1.00', { valid_from: '2020-01-01T00:00:00Z' }),
      price('compute.w4.1', '2.00', { valid_from: inDays(10) }),
      price('compute.w4.1', '3.00', { valid_from: inDays(20) }),
    ],
  });

  async function lastChanged(): Promise<string> {
    const shown = await f.cli('show');
    expect(shown.code).toBe(0);
    return (JSON.parse(shown.stdout) as { last_changed: string }).last_changed;
  }

  it('refuses to withdraw a price that took effect, writing nothing', async () => {
    await f.expectRefused(
      ['withdraw', 'compute.w1.1', '--valid-from', '2020-01-01T00:00:00Z'],
      'the list price compute.w1.1 starting at 2020-01-01T00:00:00Z took effect; what took effect cannot be withdrawn',
    );
  });

  it('refuses to withdraw an end that passed, writing nothing', async () => {
    await f.expectRefused(
      ['withdraw', 'compute.w3.1', '--valid-until', '2021-01-01T00:00:00Z'],
      'the list price compute.w3.1 ended at 2021-01-01T00:00:00Z; what took effect cannot be withdrawn',
    );
  });

  it('refuses to withdraw what does not exist, writing nothing', async () => {
    await f.expectRefused(
      ['withdraw', 'compute.w1.1', '--valid-from', '2031-01-01T00:00:00Z'],
      'no list price compute.w1.1 starts at 2031-01-01T00:00:00Z',
    );
    await f.expectRefused(
      ['withdraw', 'compute.w2.1', '--valid-until', '2031-01-01T00:00:00Z'],
      'no list price compute.w2.1 ends at 2031-01-01T00:00:00Z',
    );
    // The organization's scheduled price is not the list price's.
    await f.expectRefused(
      ['withdraw', 'compute.w1.1', '--valid-from', orgScheduledAt],
      `no list price compute.w1.1 starts at ${orgScheduledAt}`,
    );
  });

  it('refuses to withdraw the end a scheduled price sets: that price is withdrawn instead', async () => {
    await f.expectRefused(
      ['withdraw', 'compute.w1.1', '--valid-until', scheduledAt],
      `the end of the list price compute.w1.1 at ${scheduledAt} comes from the price scheduled at ${scheduledAt}; withdraw that price instead`,
    );
  });

  it('withdraws a scheduled price, reopens the price it would have ended, and moves last_changed', async () => {
    const rowsBefore = await recordsOf(f.dataSource, 'compute.w1.1');
    expect(rowsBefore.map((r) => r.amount)).toEqual(['1.00', '2.00']);
    const changedBefore = await lastChanged();
    const version = await versionOf(f.dataSource);

    const result = await f.cli('withdraw', 'compute.w1.1', '--valid-from', scheduledAt);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const withdrawnAt = /^withdrawn at (\S+) \(version (\d+)\)\n$/.exec(result.stdout);
    expect(withdrawnAt).not.toBeNull();
    expect(withdrawnAt![2]).toBe(String(Number(version) + 1));

    const rows = await recordsOf(f.dataSource, 'compute.w1.1');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: rowsBefore[0].id, amount: '1.00', valid_until: null, superseded_by: null });
    const changes: { change: string; changed_at: Date }[] = await f.dataSource.query(
      `SELECT change, changed_at FROM price_change WHERE change LIKE 'withdraw%'`,
    );
    expect(changes).toEqual([{ change: 'withdraw_price', changed_at: new Date(withdrawnAt![1]) }]);

    const changedAfter = await lastChanged();
    expect(Date.parse(changedAfter)).toBeGreaterThan(Date.parse(changedBefore));
    expect(Date.parse(changedAfter)).toBe(Date.parse(withdrawnAt![1]));
    // The organization's price is untouched.
    expect((await recordsOf(f.dataSource, 'compute.w1.1', 'org_42')).map((r) => r.amount)).toEqual(['0.90', '0.80']);
  });

  it('withdraws a scheduled end with --valid-until', async () => {
    const result = await f.cli('withdraw', 'compute.w2.1', '--valid-until', scheduledEnd);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const rows = await recordsOf(f.dataSource, 'compute.w2.1');
    expect(rows.map((r) => [r.amount, r.valid_until])).toEqual([['1.00', null]]);
    const changes: { change: string; price_record_id: string }[] = await f.dataSource.query(
      `SELECT change, price_record_id::text FROM price_change WHERE change = 'withdraw_end'`,
    );
    expect(changes).toEqual([{ change: 'withdraw_end', price_record_id: rows[0].id }]);
  });

  it('withdraws a scheduled organization price with --organization', async () => {
    const result = await f.cli('withdraw', 'compute.w1.1', '--valid-from', orgScheduledAt, '--organization', 'org_42');
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const rows = await recordsOf(f.dataSource, 'compute.w1.1', 'org_42');
    expect(rows.map((r) => [r.amount, r.valid_until, r.superseded_by])).toEqual([['0.90', null, null]]);
  });

  it('withdrawing the middle of a chain of scheduled changes hands its end and successor to the price before it', async () => {
    const before = await recordsOf(f.dataSource, 'compute.w4.1');
    expect(before.map((r) => r.amount)).toEqual(['1.00', '2.00', '3.00']);
    const result = await f.cli('withdraw', 'compute.w4.1', '--valid-from', before[1].valid_from.toISOString());
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const rows = await recordsOf(f.dataSource, 'compute.w4.1');
    expect(rows.map((r) => [r.id, r.amount, r.valid_until?.getTime() ?? null, r.superseded_by])).toEqual([
      [before[0].id, '1.00', before[2].valid_from.getTime(), before[2].id],
      [before[2].id, '3.00', null, null],
    ]);
  });

  it('refuses a second withdrawal of what is gone, writing nothing', async () => {
    await f.expectRefused(
      ['withdraw', 'compute.w1.1', '--valid-from', scheduledAt],
      `no list price compute.w1.1 starts at ${scheduledAt}`,
    );
  });
});

describe('export', () => {
  const f = useCliDatabase();
  let scheduledAt: string;
  beforeAll(async () => {
    scheduledAt = inDays(70);
    await applyBook(f.dataSource, await sampleBook());
    expectApplied(
      await f.import({
        products: [{ product_key: 'compute.g2.64', on_sale: false }],
        prices: [
          price('compute.e1.1', '1.00', { valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' }),
          price('storage.gp1', '0.0400', { organization_id: 'org_42', valid_from: '2026-06-01T00:00:00Z' }),
          price('storage.gp1', '0.0450', { valid_from: scheduledAt }),
          price('network.vpc_egress', '0.0090'),
        ],
      }),
    );
  });

  it('prints the whole book, current, scheduled and ended, in the import format and a stable order', async () => {
    const first = await f.cli('export');
    const second = await f.cli('export');
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    expect(second.stdout).toBe(first.stdout);

    const book = JSON.parse(first.stdout) as {
      products: { product_key: string; on_sale: boolean }[];
      prices: Record<string, unknown>[];
    };
    expect(Object.keys(book).sort()).toEqual(['prices', 'products']);
    expect(book.products).toEqual([
      { product_key: 'compute.g2.64', on_sale: false },
      { product_key: 'storage.io1', on_sale: false },
      { product_key: 'storage.st1', on_sale: false },
    ]);
    const count: { n: number }[] = await f.dataSource.query(`SELECT count(*)::int AS n FROM price_record`);
    expect(book.prices).toHaveLength(count[0].n);
    expect(book.prices).toContainEqual({
      product_key: 'compute.e1.1',
      unit_type: 'seconds',
      unit_count: 3600,
      amount: '1.00',
      valid_from: '2020-01-01T00:00:00Z',
      valid_until: '2021-01-01T00:00:00Z',
    });
    expect(book.prices).toContainEqual({
      product_key: 'storage.gp1',
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.0450',
      valid_from: scheduledAt,
      valid_until: null,
    });
    expect(book.prices).toContainEqual({
      product_key: 'storage.gp1',
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.0480',
      valid_from: '2026-01-01T00:00:00Z',
      valid_until: scheduledAt,
    });
    // Organization prices come last and carry organization_id.
    expect(book.prices.at(-1)).toEqual({
      product_key: 'storage.gp1',
      organization_id: 'org_42',
      unit_type: 'gib_hours',
      unit_count: 730,
      amount: '0.0400',
      valid_from: '2026-06-01T00:00:00Z',
      valid_until: null,
    });
    // List prices by product key in natural order, then valid_from.
    const listKeys = book.prices.filter((p) => !('organization_id' in p)).map((p) => p.product_key);
    expect(listKeys.slice(0, 10).join(' ')).toBe(
      'compute.e1.1 compute.g2.2 compute.g2.4 compute.g2.4 compute.g2.8 compute.g2.16 compute.g2.32 compute.m3.2 compute.m3.4 compute.m3.16',
    );
    const g24 = book.prices.filter((p) => p.product_key === 'compute.g2.4').map((p) => p.amount);
    expect(g24).toEqual(['0.0610', '0.0590']);
    expect(first.stdout.endsWith('}\n')).toBe(true);
  });

  it('importing the export into the same database changes nothing', async () => {
    const exported = await f.cli('export');
    await expectImportsChangeNothing(f, exported.stdout);
  });

  it('importing the export into an empty database and exporting again gives the same bytes', async () => {
    const exported = await f.cli('export');
    const fresh = await f.create();
    try {
      const file = await f.bookFile(exported.stdout);
      expectApplied(await fresh.cli('import', file));
      const again = await fresh.cli('export');
      expect(again.code).toBe(0);
      expect(again.stdout).toBe(exported.stdout);
      expectNothingToChange(await fresh.cli('import', file));
    } finally {
      await fresh.close();
    }
  });

  // The export has no superseded_by: a restore links a price that ends where the next starts as
  // a scheduled change, so the book that set them up still restates them.
  it('after a restore from the export, the sample book still restates what is recorded', async () => {
    const exported = await f.cli('export');
    const fresh = await f.create();
    try {
      expectApplied(await fresh.cli('import', await f.bookFile(exported.stdout)));
      expectNothingToChange(await fresh.cli('import', SAMPLE));
    } finally {
      await fresh.close();
    }
  });

  it('an empty database exports an empty book with the availability the migration set', async () => {
    const fresh = await f.create();
    try {
      const result = await fresh.cli('export');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(EMPTY_BOOK);
    } finally {
      await fresh.close();
    }
  });
});

describe('show', () => {
  const f = useCliDatabase();
  beforeAll(async () => {
    await applyBook(f.dataSource, await sampleBook());
    expectApplied(
      await f.import({
        prices: [
          price('compute.e1.1', '1.00', { valid_from: '2020-01-01T00:00:00Z', valid_until: '2021-01-01T00:00:00Z' }),
          price('compute.f1.1', '1.00', { valid_from: inDays(30) }),
          price('storage.gp1', '0.0400', { organization_id: 'org_42', valid_from: '2026-06-01T00:00:00Z' }),
          price('storage.snapshot', '0.0150', { organization_id: 'org_42', valid_from: '2026-06-01T00:00:00Z' }),
        ],
      }),
    );
  });

  it('prints the bytes GET /v1/pricing serves', async () => {
    const shown = await f.cli('show');
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: '' });

    const rendered = await PriceBookService.on(f.dataSource).priceListAt(new Date());
    expect(shown.stdout).toBe(rendered.toString('utf8'));

    const app = await startTestApp({ databaseUrl: f.url });
    try {
      const res = await request(app.server)
        .get('/v1/pricing')
        .buffer(true)
        .parse((response, done) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          response.on('end', () => done(null, text));
        });
      expect(res.status).toBe(200);
      expect(res.body).toBe(shown.stdout);
    } finally {
      await app.close();
    }
  });

  it('has the families in order and only list prices in force', async () => {
    const shown = await f.cli('show');
    const doc = JSON.parse(shown.stdout) as {
      currency: string;
      amounts_exclude_vat: boolean;
      last_changed: string;
      families: { family: string; prices: { product_key: string; amount: string; valid_until: string | null }[] }[];
    };
    expect(doc.currency).toBe('EUR');
    expect(doc.amounts_exclude_vat).toBe(true);
    const lastWrite: { at: Date }[] = await f.dataSource.query(`SELECT max(changed_at) AS at FROM price_change`);
    expect(Date.parse(doc.last_changed)).toBe(lastWrite[0].at.getTime());
    expect(doc.families.map((family) => family.family)).toEqual(FAMILY_ORDER);
    const compute = doc.families[0].prices;
    // No ended compute.e1.1, no scheduled compute.f1.1, the current (not the scheduled) compute.g2.4.
    expect(compute.map((p) => p.product_key).join(' ')).toBe(
      'compute.g2.2 compute.g2.4 compute.g2.8 compute.g2.16 compute.g2.32 compute.m3.2 compute.m3.4 compute.m3.16',
    );
    expect(compute[1]).toMatchObject({ amount: '0.0610', valid_until: '2027-01-01T00:00:00Z' });
    const storage = doc.families.find((family) => family.family === 'storage_volume')!.prices;
    expect(storage.map((p) => [p.product_key, p.amount])).toEqual([
      ['storage.gp1', '0.0480'],
      ['storage.io1', '0.1250'],
      ['storage.st1', '0.0250'],
    ]);
    const snapshot = doc.families.find((family) => family.family === 'storage_snapshot')!.prices;
    expect(snapshot.map((p) => p.amount)).toEqual(['0.0200']);
  });
});

describe('NOTIFY on change', () => {
  let listener: Client;
  const received: Notification[] = [];
  let wake: (() => void) | undefined;
  afterAll(async () => {
    await listener?.end(); // declared first: before the database is dropped
  });
  const f = useCliDatabase();

  beforeAll(async () => {
    listener = new Client({ connectionString: f.url });
    await listener.connect();
    listener.on('notification', (n) => {
      received.push(n);
      wake?.();
    });
    await listener.query(`LISTEN ${CHANNEL}`);
  });

  /** Waits for the notifications up to and including one with `payload`, and returns them. */
  async function notificationsUntil(payload: string): Promise<Notification[]> {
    const deadline = Date.now() + 10_000;
    while (!received.some((n) => n.payload === payload)) {
      if (Date.now() > deadline) throw new Error(`no notification "${payload}"; received ${JSON.stringify(received)}`);
      await new Promise<void>((done) => {
        wake = done;
        setTimeout(done, 100);
      });
    }
    const index = received.findIndex((n) => n.payload === payload);
    return received.splice(0, index + 1);
  }

  /** A marker notified by the test after a CLI run: whatever the CLI sent arrives before it. */
  async function notificationsOfLastRun(): Promise<Notification[]> {
    const marker = `marker-${Math.random()}`;
    await f.dataSource.query(`SELECT pg_notify($1, $2)`, [CHANNEL, marker]);
    return (await notificationsUntil(marker)).slice(0, -1);
  }

  it('an import that changes something notifies with the new version', async () => {
    const result = await f.cli('import', SAMPLE);
    expectApplied(result);
    const notes = await notificationsOfLastRun();
    expect(notes.map((n) => [n.channel, n.payload])).toEqual([[CHANNEL, '2']]);
  });

  it('an import that changes nothing, and a refused one, notify nothing', async () => {
    expectNothingToChange(await f.cli('import', SAMPLE));
    await f.expectRefused(['import', await f.bookFile({ prices: [price('foo.bar', '1')] })], 'prices[0].product_key');
    await f.expectRefused(
      ['import', await f.bookFile({ prices: [price('storage.gp1', '1', { valid_from: '2021-01-01T00:00:00Z' })] })],
      'prices[0].valid_from',
    );
    expect(await notificationsOfLastRun()).toEqual([]);
  });

  it('a dry run notifies nothing', async () => {
    const result = await f.cli('import', '--dry-run', await f.bookFile({ prices: [price('compute.d9.1', '1')] }));
    expect(result.stdout).toMatch(/^new +compute\.d9\.1 .*\ndry run at /);
    expect(await notificationsOfLastRun()).toEqual([]);
  });

  it('an availability change and a withdrawal notify', async () => {
    const version = Number(await versionOf(f.dataSource));
    expectApplied(await f.import({ products: [{ product_key: 'storage.gp1', on_sale: false }] }));
    expect((await notificationsOfLastRun()).map((n) => n.payload)).toEqual([String(version + 1)]);
    const at = inDays(20);
    expectApplied(await f.import({ prices: [price('storage.gp1', '0.0500', { valid_from: at })] }));
    expect((await notificationsOfLastRun()).map((n) => n.payload)).toEqual([String(version + 2)]);
    expect((await f.cli('withdraw', 'storage.gp1', '--valid-from', at)).code).toBe(0);
    expect((await notificationsOfLastRun()).map((n) => n.payload)).toEqual([String(version + 3)]);
    // A refused withdrawal notifies nothing.
    await f.expectRefused(['withdraw', 'storage.gp1', '--valid-from', at], 'no list price storage.gp1 starts at');
    expect(await notificationsOfLastRun()).toEqual([]);
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
    expect(codes).toEqual([0, 1]);
    const refused = results.find((r) => r.code === 1)!;
    expect(refused.stderr).toMatch(/^refused, nothing was written:\n {2}prices\[0\]: overlaps the recorded price/);
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

describe('usage errors exit 2', () => {
  const usageErrors: [string, string[], string][] = [
    ['no command', [], ''],
    ['an unknown command', ['frobnicate'], 'unknown command "frobnicate"'],
    ['import without a file', ['import'], 'import takes one file'],
    ['import with two files', ['import', 'a.json', 'b.json'], 'import takes one file'],
    ['export with an argument', ['export', 'x'], 'export takes no arguments'],
    ['show with an argument', ['show', 'x'], 'show takes no arguments'],
    ['withdraw without an instant', ['withdraw', 'compute.g2.4'], 'withdraw takes --valid-from or --valid-until'],
    [
      'withdraw with both instants',
      ['withdraw', 'compute.g2.4', '--valid-from', '2030-01-01T00:00:00Z', '--valid-until', '2031-01-01T00:00:00Z'],
      'withdraw takes --valid-from or --valid-until',
    ],
    ['withdraw without a key', ['withdraw', '--valid-from', '2030-01-01T00:00:00Z'], 'withdraw takes one product key'],
    [
      'withdraw with a timestamp without offset',
      ['withdraw', 'compute.g2.4', '--valid-from', '2030-01-01T00:00:00'],
      '"2030-01-01T00:00:00" is not an RFC 3339 timestamp with an offset',
    ],
    ['an unknown option', ['export', '--bogus'], "Unknown option '--bogus'"],
    ['an option of another command', ['export', '--dry-run'], '--dry-run is not an option of export'],
    ['--json on export', ['export', '--json'], '--json is not an option of export'],
    ['history without a key', ['history'], 'history takes one product key'],
    ['history with a malformed key', ['history', 'compute.G2'], '"compute.G2" is not compute.<instance_type>'],
    [
      'history with a malformed organization',
      ['history', 'storage.gp1', '--organization', 'org 42'],
      '--organization "org 42": 1 to 64 letters',
    ],
  ];
  const f = useCliDatabase();
  let dumpBefore: string;
  let dumpAfter: string;
  let results: CliResult[];
  beforeAll(async () => {
    dumpBefore = await dumpDatabase(f.dataSource);
    results = await inParallel(
      usageErrors.map(
        ([, args]) =>
          () =>
            f.cli(...args),
      ),
    );
    dumpAfter = await dumpDatabase(f.dataSource);
  }, 120_000);

  it.each(usageErrors.map((entry, index) => [...entry, index] as const))('%s', (_name, _args, message, index) => {
    const result = results[index];
    expect(result.code).toBe(2);
    expect(result.stderr + result.stdout).toContain('usage: npm run -s pricing -- <command>');
    expect(result.stderr).toContain(message);
  });

  it('usage errors write nothing', () => {
    expect(dumpAfter).toBe(dumpBefore);
  });

  it('--help prints the usage and exits 0', async () => {
    const result = await f.spawned('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('usage: npm run -s pricing -- <command>');
  });

  it('the CLI process exits with the same codes: 2 for wrong usage, 1 for a refusal', async () => {
    const [usage, refused] = await Promise.all([
      f.spawned('export', '--bogus'),
      f.spawned('import', await f.bookFile({ prices: [price('compute.g2.4', '-1')] })),
    ]);
    expect(usage).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining("Unknown option '--bogus'") });
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(
        /\.json: refused, nothing was written:\n {2}prices\[0\]\.amount: "-1" is not a decimal amount/,
      ),
    });
  });
});

describe('large outputs', () => {
  const f = useCliDatabase();
  beforeAll(async () => {
    const prices = Array.from({ length: 2_000 }, (_, i) =>
      price(`compute.big${i % 7}.${i}`, '0.0610', { valid_from: '2026-01-01T00:00:00Z' }),
    );
    expectApplied(await f.import({ prices }));
  });

  // Writes to a pipe are asynchronous: exiting right after writing would cut the output short.
  it('export and show write everything to a pipe before exiting', async () => {
    const exported = await f.spawned('export');
    expect(exported.code).toBe(0);
    expect(exported.stdout.length).toBeGreaterThan(300_000);
    expect((JSON.parse(exported.stdout) as { prices: unknown[] }).prices).toHaveLength(2_000);
    const shown = await f.spawned('show');
    expect(shown.code).toBe(0);
    expect((JSON.parse(shown.stdout) as { families: { prices: unknown[] }[] }).families[0].prices).toHaveLength(2_000);
  });
});

// PAGE and BATCH in price-book.repository.ts: 5,000 records a statement.
describe('books of more than one page of records (the database is read and written 5,000 records at a time)', () => {
  const f = useCliDatabase();
  const prices = Array.from({ length: 12_001 }, (_, i) =>
    price(`compute.page${i % 10}.${i}`, '0.0610', { valid_from: '2026-01-01T00:00:00Z' }),
  );
  beforeAll(async () => {
    await applyBook(f.dataSource, { prices });
  }, 120_000);

  it('importing the same book again changes nothing, and export has every record once', async () => {
    await expectImportsChangeNothing(f, { prices });
    const exported = JSON.parse((await f.cli('export')).stdout) as { prices: { product_key: string }[] };
    expect(exported.prices).toHaveLength(12_001);
    expect(new Set(exported.prices.map((p) => p.product_key)).size).toBe(12_001);
  }, 60_000);
});

describe('import --dry-run: the plan, checked and written as import would, then rolled back', () => {
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

  it('refuses a book exactly as import refuses it: same message, exit 1, nothing written', async () => {
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

  it('runs the writes: a book the database refuses (a constraint the planner does not know) is refused by the dry run too', async () => {
    await f.dataSource.query(`ALTER TABLE price_record ADD CONSTRAINT test_amount_below_1000 CHECK (amount < 1000)`);
    try {
      const expensive = await f.bookFile({ prices: [price('compute.d4.1', '5000')] });
      const byDryRun = await f.expectRefused(['import', '--dry-run', expensive], 'test_amount_below_1000');
      const byImport = await f.expectRefused(['import', expensive], 'test_amount_below_1000');
      expect(byDryRun.stderr).toBe(byImport.stderr);
    } finally {
      await f.dataSource.query(`ALTER TABLE price_record DROP CONSTRAINT test_amount_below_1000`);
    }
  });
});

describe('progress of a large book', () => {
  const f = useCliDatabase();
  let file: string;
  // More than one write statement (5,000 rows each), so progress would be reported several times.
  const prices = Array.from({ length: 6_000 }, (_, i) =>
    price(`compute.prog${i % 3}.${i}`, '0.0100', { valid_from: '2026-01-01T00:00:00Z' }),
  );
  beforeAll(async () => {
    file = await f.bookFile({ prices });
  });

  it('shows nothing when stderr is not a terminal, on a dry run and an import', async () => {
    const dryRun = await f.cli('import', file, '--dry-run');
    expect({ code: dryRun.code, stderr: dryRun.stderr }).toEqual({ code: 0, stderr: '' });
    expect(planLines(dryRun.stdout)).toHaveLength(6_000);
    const applied = await f.cli('import', file);
    expectApplied(applied);
    expect(linesOf(applied)).toBe(linesOf(dryRun));
  }, 60_000);

  // `script` (util-linux) runs the CLI on a pseudo-terminal; stdout goes to a file.
  const script = spawnSync('script', ['--version']).status === 0 ? it : it.skip;
  script(
    'shows reading, checking and writing on a terminal, on stderr only: stdout stays clean',
    async () => {
      const out = join(f.dir, 'tty-stdout.txt');
      const log = join(f.dir, 'tty-terminal.txt');
      const second = await f.bookFile({
        prices: prices.map((p) => ({ ...p, amount: '0.0200', valid_from: inDays(10) })),
      });
      const result = await runCommand(
        'script',
        ['-qec', `"${process.execPath}" --require "${REGISTER}" "${CLI}" import "${second}" > "${out}"`, log],
        {
          DATABASE_URL: f.url,
        },
      );
      expect(result.code).toBe(0);
      const terminal = await readFile(log, 'utf8');
      for (const step of ['reading', 'checking', '6000/6000 entries', 'writing', '12000/12000 rows']) {
        expect(terminal).toContain(step);
      }
      const stdout = await readFile(out, 'utf8');
      expect(stdout).not.toContain('\u001b'); // no terminal control sequence
      expect(stdout).not.toMatch(/reading|checking|writing/);
      expect(stdout).toMatch(/: 6000 prices set, 6000 ended, 0 availability changes, 0 unchanged \(version \d+\)\n$/);
    },
    60_000,
  );
});

describe('history', () => {
  const f = useCliDatabase();
  const scheduled = inDays(30);
  const withdrawnAt = inDays(45);
  beforeAll(async () => {
    await applyBook(f.dataSource, {
      prices: [
        price('compute.h1.1', '1.00', { valid_from: '2025-01-01T00:00:00Z', valid_until: '2026-01-01T00:00:00Z' }),
        price('compute.h1.1', '1.10', { valid_from: '2026-01-01T00:00:00Z' }),
        price('compute.h1.1', '0.90', { organization_id: 'org_3', valid_from: '2025-06-01T00:00:00Z' }),
      ],
    });
    await applyBook(f.dataSource, { prices: [price('compute.h1.1', '1.20', { valid_from: scheduled })] });
    await applyBook(f.dataSource, { prices: [price('compute.h1.1', '1.30', { valid_from: withdrawnAt })] });
    await PriceBookService.on(f.dataSource).withdraw(
      { productKey: 'compute.h1.1', organizationId: null, validFrom: new Date(withdrawnAt) },
      { actor: TEST_ACTOR },
    );
  });

  it('prints every record of the list price oldest first, with its status and when it was recorded, then the change log', async () => {
    const records = await recordsOf(f.dataSource, 'compute.h1.1');
    const recorded = records.map((r) => r.recorded_at.toISOString().replace('.000Z', 'Z'));
    const result = await f.cli('history', 'compute.h1.1');
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^history of compute\.h1\.1 \(list price\) at \S+Z: 3 records, 1 withdrawn, oldest first$/,
    );
    expect(lines.slice(1, 4)).toEqual([
      `ended     1.00 per 3600 seconds  from 2025-01-01T00:00:00Z until 2026-01-01T00:00:00Z  recorded ${recorded[0]}`,
      `in-force  1.10 per 3600 seconds  from 2026-01-01T00:00:00Z until ${scheduled}  recorded ${recorded[1]}`,
      `scheduled 1.20 per 3600 seconds  from ${scheduled}${' '.repeat(' until '.length + scheduled.length)}  recorded ${recorded[2]}`,
    ]);
    expect(lines[4]).toBe('changes, oldest first:');
    expect(lines.slice(5).map((line) => line.trim().split(/ {2,}/).slice(1))).toEqual([
      ['set', '1.00 per 3600 seconds from 2025-01-01T00:00:00Z', TEST_ACTOR],
      ['set', '1.10 per 3600 seconds from 2026-01-01T00:00:00Z', TEST_ACTOR],
      ['set', `1.20 per 3600 seconds from ${scheduled}`, TEST_ACTOR],
      ['end set', '1.10 per 3600 seconds from 2026-01-01T00:00:00Z', TEST_ACTOR],
      ['set', 'a scheduled price, withdrawn since', TEST_ACTOR],
      ['end set', `1.20 per 3600 seconds from ${scheduled}`, TEST_ACTOR],
      ['withdrawn', expect.stringMatching(/^the scheduled price recorded \S+Z$/), TEST_ACTOR],
      [],
    ]);
  });

  it("prints an organization's own records with --organization, before or after the key", async () => {
    const [after, before] = await inParallel([
      () => f.cli('history', 'compute.h1.1', '--organization', 'org_3'),
      () => f.cli('--organization', 'org_3', 'history', 'compute.h1.1'),
    ]);
    expect(after.code).toBe(0);
    expect(after.stdout.split('\n').slice(0, 2)).toEqual([
      expect.stringMatching(/^history of compute\.h1\.1 \(organization org_3\) at \S+: 1 record, oldest first$/),
      expect.stringMatching(/^in-force {2}0\.90 per 3600 seconds {2}from 2025-06-01T00:00:00Z {2}recorded /),
    ]);
    expect(before.stdout.split('\n').slice(1)).toEqual(after.stdout.split('\n').slice(1));
  });

  it('says so, exit 0, for a key and scope without records', async () => {
    const [none, otherOrg] = await inParallel([
      () => f.cli('history', 'compute.h9.1'),
      () => f.cli('history', 'compute.h1.1', '--organization', 'org_4'),
    ]);
    expect(none).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^history of compute\.h9\.1 \(list price\) at \S+Z: no records\n$/),
      stderr: '',
    });
    expect(otherOrg.stdout).toMatch(/\(organization org_4\) at \S+Z: no records\n$/);
  });
});

describe('stdout carries the output alone', () => {
  it('with the embedded PostgreSQL, its warnings go to stderr and export to stdout stays the book', async () => {
    // A data directory inside a 0700 one: as root, the CLI makes the parent searchable and warns.
    const parent = await mkdtemp(join(tmpdir(), 'price-book-cli-embedded-'));
    try {
      // The first command initialises PostgreSQL and migrates (export alone would refuse an
      // unmigrated database): its warnings, none of them on stdout.
      const migrated = await spawnCli(['migrate'], { DATA_DIR: join(parent, 'pg') });
      expect([migrated.code, migrated.stdout]).toEqual([0, 'database migrated\n']);
      if (process.getuid?.() === 0) expect(migrated.stderr).toContain('searchable (o+x)');
      const result = await spawnCli(['export'], { DATA_DIR: join(parent, 'pg') });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(EMPTY_BOOK);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }, 60_000);
});
