import fc from 'fast-check';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { PriceBookFileError, parsePriceBookText, readPriceBookFile } from './price-book-file';

// A price book file is whatever an operator was handed: any bytes, any text.

/** The longest line of a refusal: a problem's path, its fixed text and 80 quoted characters (escaped). */
const MAX_LINE = 1_000;
const GOOD_ENTRY = '{"product_key":"compute.g2.4","unit_type":"seconds","unit_count":3600,"amount":"0.0610"}';

/** A refusal of `name`: its first line says which kind, then at most 50 problems and `and N more`. */
function expectBoundedRefusal(error: unknown, name: string): void {
  expect(error).toBeInstanceOf(PriceBookFileError);
  const lines = (error as Error).message.split('\n');
  expect(
    lines[0].startsWith(`${name} is not valid JSON: `) ||
      lines[0].startsWith(`${name} has the key `) ||
      lines[0] === `${name}: refused, nothing was written:`,
  ).toBe(true);
  expect(lines.length).toBeLessThanOrEqual(52);
  for (const line of lines) expect(line.length).toBeLessThanOrEqual(MAX_LINE);
}

function outcome(text: string): unknown {
  try {
    return parsePriceBookText(text, 'book.json');
  } catch (error) {
    return error;
  }
}

/** Text that parses as JSON and looks like a book: entries repeated, or one value long. */
const bookLikeText = fc.oneof(
  fc.json(),
  fc
    .tuple(fc.constantFrom('prices', 'products', 'x'), fc.jsonValue({ maxDepth: 2 }), fc.integer({ min: 0, max: 600 }))
    .map(([field, entry, count]) => JSON.stringify({ [field]: Array.from({ length: count }, () => entry) })),
  fc
    .tuple(fc.constantFrom('product_key', 'amount', 'organization_id', 'valid_from', 'unit_type'), outsideText())
    .map(([field, value]) => JSON.stringify({ prices: [{ ...JSON.parse(GOOD_ENTRY), [field]: value }] })),
);

describe('parsePriceBookText on any text', () => {
  it('never throws anything but a PriceBookFileError, whose every line is bounded', () => {
    fc.assert(
      fc.property(fc.oneof(outsideText(['{', '[', '"', '\\', ',', ' ', '{"prices":[']), bookLikeText), (text) => {
        const result = outcome(text);
        if (result instanceof Error) expectBoundedRefusal(result, 'book.json');
        else expect(result).toEqual({ products: expect.any(Array), prices: expect.any(Array) });
      }),
    );
  });
});

describe('readPriceBookFile on any bytes', () => {
  let dir: string;
  beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'price-book-bytes-'))));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads a book or refuses with a bounded PriceBookFileError', async () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 20_000 }),
      bookLikeText.map((text) => new Uint8Array(Buffer.from(text))),
      fc.tuple(bookLikeText, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 })).map(([text, at, noise]) => {
        const buffer = Buffer.from(text);
        const i = at % (buffer.length + 1);
        return new Uint8Array(Buffer.concat([buffer.subarray(0, i), noise, buffer.subarray(i)]));
      }),
    );
    let count = 0;
    await fc.assert(
      fc.asyncProperty(bytes, async (content) => {
        const path = join(dir, `book-${++count}.json`);
        await writeFile(path, content);
        const result = await readPriceBookFile(path, { maxBytes: 16_384 }).then(
          (book) => book,
          (error: unknown) => error,
        );
        if (result instanceof Error) {
          if (content.length > 16_384) {
            expect(result.message).toBe(
              `${path} is ${content.length} bytes, more than PRICE_BOOK_MAX_BYTES (16384 bytes): refused, nothing was written`,
            );
          } else expectBoundedRefusal(result, path);
        } else expect(content.length).toBeLessThanOrEqual(16_384);
      }),
    );
  });
});

describe('parsePriceBookText: linear time on 16 KB', () => {
  /** A book of as many copies of `entry` as fill `length` characters. */
  const book = (field: string, entry: string) => (length: number) => {
    const count = Math.max(1, Math.floor((length - field.length - 8) / (entry.length + 1)));
    return `{"${field}":[${Array.from({ length: count }, () => entry).join(',')}]}`;
  };
  const longValue = (field: string, prefix: string, unit: string) => (length: number) =>
    `{"prices":[{"${field}":"${prefix}${repeated(unit, length - prefix.length - field.length - 20)}"}]}`;

  it.each<[string, (n: number) => string]>([
    ['good entries', book('prices', GOOD_ENTRY)],
    ['entries with every field wrong', book('prices', '{"amount":-1,"unit_count":0,"x":1,"valid_from":5}')],
    ['empty entries', book('prices', '{}')],
    ['duplicated products', book('products', '{"product_key":"storage.gp1","on_sale":true}')],
    ['a long product key', longValue('product_key', 'compute.', 'a.')],
    ['a long storage key', longValue('product_key', 'storage.', 'x')],
    ['a long amount', longValue('amount', '', '1')],
    ['a long organization id', longValue('organization_id', '', 'o')],
    ['a long timestamp', longValue('valid_from', '2027-01-01T00:00:00', '.1')],
    ['a long unknown field', (n) => `{"prices":[{"${repeated('f', n - 20)}":1}]}`],
    ['a string full of escapes', longValue('amount', '', '\\u001b')],
    ['keys full of escapes', (n) => `{"prices":[{"${repeated('\\u0061', n / 7)}":1}]}`],
    ['one key many times', (n) => `{"prices":[{${Array.from({ length: n / 6 }, () => '"f":1').join(',')}}]}`],
    ['many unknown fields', (n) => `{"prices":[{${Array.from({ length: n / 10 }, (_, i) => `"f${i}":1`).join(',')}}]}`],
    ['nested arrays', (n) => `${repeated('[', n / 2)}${repeated(']', n / 2)}`],
    ['unterminated nesting', (n) => repeated('[', n)],
    ['an unterminated string', (n) => `{"prices":"${repeated('a', n)}`],
    ['spaces before the book', (n) => `${repeated(' ', n - 2)}{}`],
    ['control characters in a string', (n) => `{"description":"${repeated('\u0001', n)}"}`],
  ])('%s', (_what, inputOfLength) => {
    expectLinearTime(outcome, inputOfLength);
  });
});
