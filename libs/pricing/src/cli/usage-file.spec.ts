import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PriceBookFileError } from './price-book-file';
import { parseUsageCsv, readUsageFile } from './usage-file';

const problemsOf = (text: string) => {
  const parsed = parseUsageCsv(text);
  return 'problems' in parsed ? parsed.problems : [];
};

describe('parseUsageCsv', () => {
  it('reads each family with its columns: time, time and size, metered quantity; organization optional', () => {
    const parsed = parseUsageCsv(
      '\ufeffproduct_key,organization_id,start,end,quantity,size_gib\r\n' +
        'compute.g2.4,,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,,\r\n' +
        'storage.gp1,org_42,2026-03-01T01:00:00+01:00,2026-03-01T00:00:00Z,,"100"\r\n' +
        '"network.vpc_egress",org_42,2026-03-01T00:00:00Z,2026-03-01T01:00:00.250Z,12.5,\r\n',
    );
    expect(parsed).toEqual({
      rows: [
        {
          line: 2,
          productKey: 'compute.g2.4',
          unitType: 'seconds',
          organizationId: null,
          from: new Date('2026-03-01T00:00:00Z'),
          to: new Date('2026-03-02T00:00:00Z'),
          quantity: null,
          sizeGib: null,
        },
        {
          line: 3,
          productKey: 'storage.gp1',
          unitType: 'gib_hours',
          organizationId: 'org_42',
          from: new Date('2026-03-01T00:00:00Z'),
          to: new Date('2026-03-01T00:00:00Z'),
          quantity: null,
          sizeGib: '100',
        },
        {
          line: 4,
          productKey: 'network.vpc_egress',
          unitType: 'gb',
          organizationId: 'org_42',
          from: new Date('2026-03-01T00:00:00Z'),
          to: new Date('2026-03-01T01:00:00.250Z'),
          quantity: '12.5',
          sizeGib: null,
        },
      ],
    });
    // The three required columns alone, LF line ends, no final line end.
    expect(
      parseUsageCsv('start,end,product_key\n2026-03-01T00:00:00Z,2026-03-01T00:00:01Z,compute.g2.4'),
    ).toMatchObject({
      rows: [{ productKey: 'compute.g2.4', line: 2 }],
    });
  });

  it('names every problem with its line: an unknown key, a bad instant, a missing size, a quantity where none goes', () => {
    const text =
      'product_key,organization_id,start,end,quantity,size_gib\n' +
      'storage.gp2,,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,,1\n' +
      'compute.g2.4,-org,2026-03-01,2026-03-02T00:00:00Z,5,\n' +
      'storage.gp1,,2026-03-02T00:00:00Z,2026-03-01T00:00:00Z,,\n' +
      'network.vpc_egress,,2026-03-01T00:00:00Z,2026-03-01T00:00:00Z,1e3,\n' +
      '"multi\nline",x\n' +
      'compute.g2.4,,2026-03-01T00:00:00Z,2026-03-01T00:00:00Z,,\n';
    expect(problemsOf(text)).toEqual([
      'line 2: product_key "storage.gp2" has no storage class of gp1, st1, io1 and is not storage.snapshot',
      'line 3: organization_id "-org" is not 1 to 64 letters, digits, "_", "." or "-" starting with a letter or digit',
      'line 3: start "2026-03-01" is not an RFC 3339 timestamp with an offset',
      'line 3: quantity is given, but seconds usage has none',
      'line 4: end 2026-03-01T00:00:00Z is not after start 2026-03-02T00:00:00Z',
      'line 4: size_gib "" is not a non-negative decimal of at most 60 digits',
      'line 5: end 2026-03-01T00:00:00Z is not after start 2026-03-01T00:00:00Z',
      'line 5: quantity "1e3" is not a non-negative decimal of at most 60 digits',
      'line 6: 2 fields, where the header has 6',
    ]);
  });

  it('refuses a header with an unknown, a repeated or a missing column, and CSV that breaks RFC 4180', () => {
    expect(problemsOf('product_key,start,size_gb,start\n')).toEqual([
      'line 1: unknown column "size_gb" (the columns: product_key, start, end, organization_id, quantity, size_gib)',
      'line 1: the column start is named twice',
      'line 1: the column end is missing',
    ]);
    expect(problemsOf('')).toEqual(['the file is empty: a header line is needed']);
    expect(problemsOf('product_key,start,end\n"compute.g2.4,x,y\n')).toEqual(['line 2: a quoted field is not closed']);
    expect(problemsOf('product_key,start,end\n"a"b,x,y\n')).toEqual([
      'line 2: text after the closing quote of a field',
    ]);
    expect(problemsOf('product_key,start,end\na"b,x,y\n')).toEqual([
      'line 2: a quote inside a field that is not quoted',
    ]);
    // A record is named by the line it starts on, after quoted line breaks too.
    const lines = problemsOf('product_key,start,end\r\n"x\r\ny\n",a,b\r\nz,a,b\r\n').map((problem) =>
      problem.slice(0, 7),
    );
    expect(new Set(lines)).toEqual(new Set(['line 2:', 'line 5:']));
  });

  it('stops reading after 51 problems: enough to list, and a bounded refusal', () => {
    const text = 'product_key,start,end\n' + 'x,y,z\n'.repeat(10_000);
    expect(problemsOf(text).length).toBeLessThanOrEqual(53);
  });
});

describe('readUsageFile', () => {
  let dir: string;
  beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'usage-file-'))));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('refuses a file that is missing, too large or malformed with PriceBookFileError naming it', async () => {
    const path = join(dir, 'usage.csv');
    await expect(readUsageFile(join(dir, 'none.csv'))).rejects.toThrow(
      `cannot read ${join(dir, 'none.csv')}: no such file`,
    );
    await writeFile(path, 'product_key,start,end\nstorage.gp2,x,y\n');
    const error = await readUsageFile(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PriceBookFileError);
    expect((error as Error).message).toMatch(
      new RegExp(`^${path}: refused, nothing was priced:\\n  line 2: product_key`),
    );
    await expect(readUsageFile(path, { maxBytes: 10 })).rejects.toThrow('more than PRICE_BOOK_MAX_BYTES (10 bytes)');
  });
});
