import { withPriceBook } from '@app/pricing/cli';
import request from 'supertest';
import { FAMILY_ORDER } from '../support/contract';
import { applyBook } from '../support/database';
import { EMPTY_BOOK, expectApplied, expectImportsChangeNothing } from '../support/price-book-cli';
import { expectNothingToChange, inDays, price, SAMPLE, sampleBook, useCliDatabase } from '../support/price-book-cli';
import { startTestApp } from '../support/test-app';
import { inOneTransaction } from '../support/tamper';

// `export` (the whole book in the import format) and `show` (the public list, as GET /v1/pricing serves it).

describe('export', () => {
  const f = useCliDatabase();
  let scheduledAt: string;
  beforeAll(async () => {
    scheduledAt = inDays(70);
    await applyBook(f.dataSource, await sampleBook());
    expectApplied(
      await f.import({
        products: [{ product_key: 'compute.g2.32', on_sale: false }],
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
      { product_key: 'compute.g2.32', on_sale: false },
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

  it('prints the bytes GET /v1/pricing serves, and on stderr the products not on sale', async () => {
    const shown = await f.cli('show');
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({
      code: 0,
      stderr: 'not on sale (ordering them fails with PRODUCT_UNAVAILABLE): storage.io1, storage.st1\n',
    });

    const rendered = await withPriceBook(f.dataSource, (priceBook) => priceBook.priceListAt(new Date()));
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

  it('--json prints the document, its bytes as they are, and the availability of every product with a row', async () => {
    const [shown, json] = await Promise.all([f.cli('show'), f.cli('show', '--json')]);
    expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: '' });
    expect(json.stdout).toBe(
      `{"price_list":${shown.stdout},"products":[{"product_key":"storage.io1","on_sale":false},{"product_key":"storage.st1","on_sale":false}]}\n`,
    );
    expect(JSON.parse(json.stdout)).toEqual({ price_list: JSON.parse(shown.stdout), products: expect.any(Array) });
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

// Rows written around the book's rules, by a superuser who set price_record's constraints aside:
// `export` and `show` print every value escaped (bidirectional and C1 controls, U+2028, which
// JSON.stringify leaves raw) and whole, or refuse naming the record (docs/price-book-cli.md).
describe('export and show of rows written by hand', () => {
  const f = useCliDatabase({
    prices: [
      price('compute.g2.4', '0.0610', { valid_from: '2026-01-01T00:00:00Z' }),
      price('storage.gp1', '0.0480', { organization_id: 'org_42', valid_from: '2026-01-01T00:00:00Z' }),
    ],
  });
  /** What a terminal acts on or hides, in one line (line feeds end lines). */
  const RAW = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/u;
  const rawLines = (text: string) => text.split('\n').filter((line) => RAW.test(line));
  const UNIT = 'seconds\u202e\u009b2J\u2028';
  const ORG = 'org\u202e24';
  const CONSTRAINTS = [
    ['price_record_product_key_shape', 'pricing_unit_type_of(product_key) IS NOT NULL'],
    ['price_record_unit_type_of_family', 'unit_type = pricing_unit_type_of(product_key)'],
    ['price_record_organization_id_shape', "organization_id ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'"],
  ];

  /** Writes `statements` with price_record's shape rules set aside, then set back (NOT VALID: the rows stay). */
  const aroundTheRules = (...statements: string[]) =>
    inOneTransaction(f.url, [
      `ALTER TABLE price_record ${CONSTRAINTS.map(([name]) => `DROP CONSTRAINT ${name}`).join(', ')}`,
      ...statements,
      `ALTER TABLE price_record ${CONSTRAINTS.map(([name, check]) => `ADD CONSTRAINT ${name} CHECK (${check}) NOT VALID`).join(', ')}`,
    ]);
  /** `text` as a PostgreSQL E'' literal, every character beyond ASCII as \uXXXX. */
  const literal = (text: string) =>
    `E'${[...text].map((c) => (c.charCodeAt(0) < 0x80 ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)).join('')}'`;

  it('a book as written: the bytes it always had (nothing to escape)', async () => {
    const exported = await f.cli('export');
    expect(exported.code).toBe(0);
    expect(exported.stdout).toBe(`${JSON.stringify(JSON.parse(exported.stdout), null, 2)}\n`);
    const shown = await f.cli('show');
    expect(shown.stdout).toBe(
      (await withPriceBook(f.dataSource, (priceBook) => priceBook.priceListAt(new Date()))).toString('utf8'),
    );
  });

  it('escapes bidirectional and C1 controls and U+2028 as \\u escapes: the same values, nothing raw', async () => {
    await aroundTheRules(
      `INSERT INTO price_record (product_key, organization_id, unit_type, unit_count, amount, valid_from)
       VALUES ('compute.g2.8', NULL, ${literal(UNIT)}, 3600, 0.5, '2026-02-01T00:00:00Z'),
              ('storage.gp1', ${literal(ORG)}, 'gib_hours', 730, 0.04, '2026-02-01T00:00:00Z')`,
    );
    const exported = await f.cli('export');
    expect({ code: exported.code, stderr: exported.stderr }).toEqual({ code: 0, stderr: '' });
    expect(rawLines(exported.stdout)).toEqual([]);
    expect(exported.stdout).toContain('"seconds\\u202e\\u009b2J\\u2028"');
    expect(exported.stdout).toContain('"org\\u202e24"');
    const book = JSON.parse(exported.stdout) as { prices: { unit_type: string; organization_id?: string }[] };
    expect(book.prices.map((p) => p.unit_type)).toContain(UNIT); // the values themselves, read back
    expect(book.prices.map((p) => p.organization_id)).toContain(ORG);
    // The same state, the same bytes.
    expect((await f.cli('export')).stdout).toBe(exported.stdout);

    const shown = await f.cli('show');
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({
      code: 0,
      stderr: 'not on sale (ordering them fails with PRODUCT_UNAVAILABLE): storage.io1, storage.st1\n',
    });
    expect(rawLines(shown.stdout)).toEqual([]);
    const list = JSON.parse(shown.stdout) as { families: { prices: { unit_type: string }[] }[] };
    expect(list.families.flatMap((family) => family.prices.map((p) => p.unit_type))).toContain(UNIT);
  });

  it('refuses a value longer than any rule allows (1 MB), naming the record, printing nothing', async () => {
    await aroundTheRules(
      `INSERT INTO price_record (product_key, organization_id, unit_type, unit_count, amount, valid_from)
       VALUES ('compute.g2.16', NULL, repeat('s', 1048576), 3600, 0.5, '2026-03-01T00:00:00Z'),
              ('storage.gp1', repeat('o', 2000), 'gib_hours', 730, 0.04, '2026-03-01T00:00:00Z')`,
    );
    const ids = await f.dataSource.query<{ id: string; long: string }[]>(
      `SELECT id::text, CASE WHEN organization_id IS NULL THEN 'unit' ELSE 'org' END AS long
         FROM price_record WHERE char_length(unit_type) > 1000 OR char_length(organization_id) > 1000 ORDER BY 2`,
    );
    const exported = await f.cli('export');
    expect({ code: exported.code, stdout: exported.stdout }).toEqual({ code: 3, stdout: '' });
    expect(exported.stderr).toContain(
      `export: price record ${ids[0].id} (product_key "storage.gp1") has organization_id (2000 characters): longer than 1024 characters`,
    );
    expect(exported.stderr).toContain(
      `export: price record ${ids[1].id} (product_key "compute.g2.16") has unit_type (1048576 characters)`,
    );
    expect(exported.stderr).toContain('export prints a value exactly or not at all');
    expect(exported.stderr.length).toBeLessThan(2_000);

    const shown = await f.cli('show');
    expect({ code: shown.code, stdout: shown.stdout }).toEqual({ code: 3, stdout: '' });
    expect(shown.stderr).toMatch(
      /show: families\[0\]\.prices\[\d+\] \(product_key "compute\.g2\.16"\) has unit_type \(1048576 characters\)/,
    );
    expect(shown.stderr.length).toBeLessThan(2_000);
  });
});
