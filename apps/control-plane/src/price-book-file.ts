import { parsePriceBook, type PriceBook } from '@app/pricing';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/** The sample price book, in the repository (also when running from dist/). */
export const SAMPLE_PRICE_BOOK = join(projectRoot(), 'apps', 'control-plane', 'sample', 'price-book.json');

export class PriceBookFileError extends Error {}

/** Reads and checks a price book file; every problem is in the error's message. */
export async function readPriceBookFile(path: string): Promise<PriceBook> {
  let text: string;
  try {
    text = await readFile(resolve(path), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new PriceBookFileError(
      `cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new PriceBookFileError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = parsePriceBook(json);
  if ('errors' in parsed) {
    throw new PriceBookFileError(`${path}: refused, nothing was written:\n  ${parsed.errors.join('\n  ')}`);
  }
  return parsed.book;
}

export function readSamplePriceBook(): Promise<PriceBook> {
  return readPriceBookFile(SAMPLE_PRICE_BOOK);
}

function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
