import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dumpDatabase } from './support/database';
import { sampleBook, useCliDatabase } from './support/price-book-cli';

// Hostile price book files and values through the CLI (docs/price-book-cli.md, "Large books and hostile files"): only a
// regular file within PRICE_BOOK_MAX_BYTES is read, and messages quote values within bounds.
// Every refusal is checked to leave the database as it was.

/** The longest line a refusal may print: a problem's text with at most 80 characters quoted. */
const MAX_LINE = 400;

const db = useCliDatabase(sampleBook);
const { cli, bookFile, expectRefused } = db;

/** A good book: one price of a product the sample does not have, a year from now. */
function goodBook(key: string): string {
  const validFrom = new Date(Math.floor(Date.now() / 1000 + 365 * 86_400) * 1000).toISOString();
  return JSON.stringify({
    prices: [{ product_key: key, unit_type: 'seconds', unit_count: 3600, amount: '0.0100', valid_from: validFrom }],
  });
}

function longestLine(text: string): number {
  return Math.max(...text.split('\n').map((line) => line.length));
}

describe('price book files the CLI does not read', () => {
  it('refuses a FIFO at once, without waiting for a writer: exit 1, nothing written', async () => {
    const fifo = join(db.dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    // Should the CLI block on the FIFO, a writer comes after 10 s with an empty book, so that
    // the test fails on what the CLI then does rather than hanging.
    const unblock = setTimeout(() => {
      void open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).then(
        (writer) => writer.writeFile('{}').finally(() => writer.close()),
        () => undefined,
      );
    }, 10_000);
    try {
      const started = Date.now();
      const result = await expectRefused(['import', fifo]);
      expect(result.stderr).toBe(
        `cannot read ${fifo}: it is a FIFO, not a regular file; only a regular file is read\n`,
      );
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      clearTimeout(unblock);
    }
  }, 30_000);

  it('refuses a book over PRICE_BOOK_MAX_BYTES without reading it, and reads one exactly at the bound', async () => {
    const text = goodBook('compute.z9.1');
    const file = await bookFile(text);
    const size = Buffer.byteLength(text);
    const refused = await expectRefused(['import', file], undefined, {
      env: { PRICE_BOOK_MAX_BYTES: String(size - 1) },
    });
    expect(refused.stderr).toBe(
      `${file} is ${size} bytes, more than PRICE_BOOK_MAX_BYTES (${size - 1} bytes): refused, nothing was written\n`,
    );
    const dryRun = await cli('import', '--dry-run', file, { PRICE_BOOK_MAX_BYTES: String(size) });
    expect({ code: dryRun.code, stderr: dryRun.stderr }).toEqual({ code: 0, stderr: '' });
    expect(dryRun.stdout).toMatch(/^new +compute\.z9\.1 +list /);
  });

  it('checks PRICE_BOOK_MAX_BYTES before reading a book, but after the command line; --help needs no configuration', async () => {
    const file = await bookFile(goodBook('compute.z9.2'));
    const bad = { PRICE_BOOK_MAX_BYTES: '0' };
    const refused = await expectRefused(['import', file], undefined, { env: bad, code: 7 });
    expect(refused.stderr).toBe(
      'invalid configuration:\n  PRICE_BOOK_MAX_BYTES must be a positive integer (bytes) of at least 1\n',
    );
    const usage = await cli('import', file, 'another.json', bad);
    expect(usage.code).toBe(64);
    expect(usage.stderr).toMatch(/^import takes one file \(- for standard input\)\n/);
    const help = await cli('--help', bad);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: npm run -s pricing -- <command>');
  });
});

describe('messages quote values of the book and the command line within bounds', () => {
  const key = `compute.${'x'.repeat(9992)}`;

  it('quotes 80 characters of a 10,000-character product key and lists 50 of 500 problems', async () => {
    const prices = [
      { product_key: key, unit_type: 'seconds', unit_count: 3600, amount: '1' },
      ...Array.from({ length: 499 }, () => ({
        product_key: 'compute.g2.4',
        unit_type: 'seconds',
        unit_count: 3600,
        amount: `-${'9'.repeat(5000)}`,
      })),
    ];
    const file = await bookFile(JSON.stringify({ prices }));
    const { stderr } = await expectRefused(['import', file]);
    const lines = stderr.split('\n');
    expect(lines[0]).toBe(`${file}: refused, nothing was written:`);
    expect(lines[1]).toBe(
      `  prices[0].product_key: "${key.slice(0, 80)}…" (10000 characters) is not compute.<instance_type> ` +
        'with a dotted instance type of lower-case letters and digits (e.g. compute.g2.4)',
    );
    expect(lines[2]).toMatch(/^ {2}prices\[1\]\.amount: "-9{79}…" \(5001 characters\) is not a decimal amount/);
    expect(lines.slice(51)).toEqual(['  and 450 more', '']);
    expect(longestLine(stderr)).toBeLessThan(MAX_LINE);
  });

  it.each([
    [
      'the same product twice in one entry',
      '{"products":[{"product_key":"storage.io1",\n"on_sale":false,\n"on_sale":true}]}',
      'on_sale',
      3,
    ],
    ['two lists of prices', `{"prices":${goodBook('compute.z9.1').slice(10, -1)},\n"prices":[]}`, 'prices', 2],
    ['an amount twice, one escaped', '{"prices":[{"amount":"1",\n"\\u0061mount":"2"}]}', 'amount', 2],
  ])(
    'refuses a book with %s, naming the key and its line, on a dry run and an import',
    async (_what, text, key, line) => {
      const file = await bookFile(text);
      for (const args of [
        ['import', '--dry-run', file],
        ['import', file],
      ]) {
        const { stderr } = await expectRefused(args);
        expect(stderr).toContain(`${file} has the key "${key}" twice in one object (line ${line})`);
      }
    },
  );

  it('refuses a plan file with a key twice, and applies nothing', async () => {
    const book = await bookFile(goodBook('compute.z9.2'));
    const plan = join(db.dir, 'planned.plan.json');
    const planned = await cli('import', '--dry-run', '--plan-out', plan, book);
    expect(planned.code).toBe(0);
    const edited = (await readFile(plan, 'utf8')).replace('"changes":', '"changes": [],\n  "changes":');
    await writeFile(plan, edited);
    const { stderr } = await expectRefused(['apply', plan, book]);
    expect(stderr).toContain(`${plan} has the key "changes" twice in one object`);
  });

  it('does not repeat the text of a book that is not JSON', async () => {
    const file = await bookFile(`{"prices": ${'\u001b[2J'.repeat(100_000)}`);
    const { stderr } = await expectRefused(['import', file]);
    expect(stderr).toMatch(new RegExp(`^${file.replace(/[.]/g, '\\.')} is not valid JSON: `));
    expect(stderr).not.toContain('\u001b');
    expect(longestLine(stderr)).toBeLessThan(MAX_LINE);
  });

  it.each([
    ['history of a long product key', ['history', key], `"${key.slice(0, 80)}…" (10000 characters) is not compute.`],
    [
      'history of a long organization',
      ['history', 'storage.gp1', '--organization', 'o'.repeat(10_000)],
      `--organization "${'o'.repeat(80)}…" (10000 characters): 1 to 64 letters`,
    ],
    [
      'withdraw at a long timestamp',
      ['withdraw', 'compute.g2.4', '--valid-from', `2030-${'1'.repeat(10_000)}`],
      `"2030-${'1'.repeat(75)}…" (10005 characters) is not an RFC 3339 timestamp`,
    ],
    ['a long unknown command', ['z'.repeat(10_000)], `unknown command "${'z'.repeat(80)}…" (10000 characters)`],
    [
      'a long unknown option',
      ['export', `--${'y'.repeat(10_000)}`],
      `unknown option "--${'y'.repeat(78)}…" (10002 characters) of export`,
    ],
  ])('a usage error quotes 80 characters of an argument: %s', async (_what, args, message) => {
    const before = await dumpDatabase(db.dataSource);
    const result = await cli(...args);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain(message);
    expect(longestLine(result.stderr)).toBeLessThan(MAX_LINE);
    expect(await dumpDatabase(db.dataSource)).toBe(before);
  });
});
