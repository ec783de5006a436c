import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parsePriceBook, type PriceBook } from '../price-book/price-book';
import { NO_PROGRESS, type Progress } from '../price-book/progress';

/** A price book file that cannot be read, is not JSON, or breaks the format: nothing is written. */
export class PriceBookFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PriceBookFileError';
  }
}

/** Reads and checks a price book file, reporting the bytes read; every problem is in the error's message. */
export async function readPriceBookFile(path: string, progress: Progress = NO_PROGRESS): Promise<PriceBook> {
  let text: string;
  try {
    text = await readText(resolve(path), progress);
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

async function readText(path: string, progress: Progress): Promise<string> {
  progress.start('reading', (await stat(path)).size, 'bytes');
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of createReadStream(path)) {
    chunks.push(chunk as Buffer);
    progress.update((read += (chunk as Buffer).length));
  }
  return Buffer.concat(chunks).toString('utf8');
}
