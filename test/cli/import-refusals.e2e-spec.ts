import { join } from 'node:path';
import type { CliResult } from '../support/cli';
import { applyBook, dumpDatabase } from '../support/database';
import { expectApplied, inDays, inParallel, price, recordsOf, sampleBook } from '../support/price-book-cli';
import { useCliDatabase } from '../support/price-book-cli';

// Price books `import` refuses: exit 3 (refused), the entry named, and the database exactly as it was.

describe('refused price books: exit 3, the entry named, nothing written', () => {
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
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 3, stdout: '' });
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
