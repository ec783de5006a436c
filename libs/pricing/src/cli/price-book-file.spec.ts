import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { mkdir, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Progress } from '../price-book/progress';
import { PriceBookFileError, readPriceBookFile } from './price-book-file';
import { useTempDir } from '../../../../test/support/temp-dir';

const PRICE = {
  product_key: 'compute.g2.4',
  unit_type: 'seconds',
  unit_count: 3600,
  amount: '0.0610',
  valid_from: '2027-01-01T00:00:00Z',
};
const BOOK = JSON.stringify({ prices: [PRICE] });

const dir = useTempDir('price-book-file');
let count = 0;

async function file(content: string | Buffer): Promise<string> {
  const path = join(dir.path, `book-${++count}.json`);
  await writeFile(path, content);
  return path;
}

/** What a read reported: every call, in order. */
function recording(onUpdate: (done: number) => void = () => undefined): { progress: Progress; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    progress: {
      start: (step, total, unit) => void calls.push(`start ${step} ${total} ${unit}`),
      update: (done) => {
        calls.push(`update ${done}`);
        onUpdate(done);
      },
      stop: () => void calls.push('stop'),
    },
  };
}

async function refusal(read: Promise<unknown>): Promise<string> {
  const error = await read.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PriceBookFileError);
  return (error as Error).message;
}

describe('readPriceBookFile: what it reads', () => {
  it('reads and checks a regular file, reporting the bytes read', async () => {
    const { progress, calls } = recording();
    const book = await readPriceBookFile(await file(BOOK), { progress });
    expect(book.prices.map((p) => p.productKey)).toEqual(['compute.g2.4']);
    expect(calls).toEqual([`start reading ${BOOK.length} bytes`, `update ${BOOK.length}`]);
  });

  it('refuses a FIFO at once, without waiting for a writer', async () => {
    const fifo = join(dir.path, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    const started = Date.now();
    expect(await refusal(readPriceBookFile(fifo))).toBe(
      `cannot read ${fifo}: it is a FIFO, not a regular file; only a regular file is read`,
    );
    expect(Date.now() - started).toBeLessThan(1000);
  }, 5000);

  it('refuses a directory', async () => {
    const path = join(dir.path, 'a-directory.json');
    await mkdir(path);
    expect(await refusal(readPriceBookFile(path))).toBe(
      `cannot read ${path}: it is a directory, not a regular file; only a regular file is read`,
    );
  });

  it.each(['/dev/zero', '/dev/null'])('refuses the device %s', async (device) => {
    expect(await refusal(readPriceBookFile(device))).toBe(
      `cannot read ${device}: it is a character device, not a regular file; only a regular file is read`,
    );
  });

  it('refuses a file over the bound without reading any of it', async () => {
    const path = await file(BOOK);
    const { progress, calls } = recording();
    expect(await refusal(readPriceBookFile(path, { maxBytes: BOOK.length - 1, progress }))).toBe(
      `${path} is ${BOOK.length} bytes, more than PRICE_BOOK_MAX_BYTES (${BOOK.length - 1} bytes): refused, nothing was written`,
    );
    expect(calls).toEqual([]);
  });

  it('refuses a sparse file of 4 GiB at once with the default bound of 512 MiB', async () => {
    const path = await file('');
    await truncate(path, 4 * 1024 ** 3);
    const started = Date.now();
    expect(await refusal(readPriceBookFile(path))).toBe(
      `${path} is ${4 * 1024 ** 3} bytes, more than PRICE_BOOK_MAX_BYTES (536870912 bytes): refused, nothing was written`,
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('reads a file exactly at the bound', async () => {
    const book = await readPriceBookFile(await file(BOOK), { maxBytes: BOOK.length });
    expect(book.prices).toHaveLength(1);
  });

  it('stops reading a file that grows past the bound while it is read', async () => {
    const path = await file(BOOK);
    let grown = false;
    const { progress, calls } = recording(() => {
      if (!grown) appendFileSync(path, ' '.repeat(10_000));
      grown = true;
    });
    expect(await refusal(readPriceBookFile(path, { maxBytes: BOOK.length + 10, progress }))).toBe(
      `${path} grew past PRICE_BOOK_MAX_BYTES (${BOOK.length + 10} bytes) while it was read: refused, nothing was written`,
    );
    // One byte past the bound is all it read.
    expect(calls.at(-1)).toBe(`update ${BOOK.length + 11}`);
  });

  it('reads a file that grows within the bound while it is read', async () => {
    const path = await file(BOOK);
    let grown = false;
    const { progress } = recording(() => {
      if (!grown) appendFileSync(path, ' '.repeat(3 * 1024 * 1024));
      grown = true;
    });
    const book = await readPriceBookFile(path, { maxBytes: 4 * 1024 * 1024, progress });
    expect(book.prices).toHaveLength(1);
  });

  it('names a missing file', async () => {
    const path = join(dir.path, 'missing.json');
    expect(await refusal(readPriceBookFile(path))).toBe(`cannot read ${path}: no such file`);
  });
});

describe('readPriceBookFile: messages quote the book within bounds', () => {
  it('quotes 80 characters of a 10,000-character product key', async () => {
    const key = `compute.${'x'.repeat(9992)}`;
    const message = await refusal(
      readPriceBookFile(await file(JSON.stringify({ prices: [{ ...PRICE, product_key: key }] }))),
    );
    expect(message).toContain(`prices[0].product_key: "${key.slice(0, 80)}…" (10000 characters) is not compute.`);
    expect(message).not.toContain(key.slice(0, 81));
  });

  it('lists 50 problems of a book with 500 bad entries, then "and 450 more"', async () => {
    const prices = Array.from({ length: 500 }, () => ({ ...PRICE, amount: '-1' }));
    const path = await file(JSON.stringify({ prices }));
    const lines = (await refusal(readPriceBookFile(path))).split('\n');
    expect(lines[0]).toBe(`${path}: refused, nothing was written:`);
    expect(lines.slice(1, 51).every((line, i) => line.startsWith(`  prices[${i}].amount: "-1" is not`))).toBe(true);
    expect(lines.slice(51)).toEqual(['  and 450 more']);
  });

  it('does not repeat the text around a JSON syntax error at length', async () => {
    const path = await file(`{"prices": [${'\u001b[2J'.repeat(20_000)}`);
    const message = await refusal(readPriceBookFile(path));
    expect(message.startsWith(`${path} is not valid JSON: `)).toBe(true);
    expect(message).not.toContain('\u001b');
    expect(message.length).toBeLessThan(path.length + 250);
  });
});
