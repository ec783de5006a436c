import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import { foreignMessage, listProblems, quoteValue } from '../errors/bounded-text';
import { PricingError, PricingErrorCode } from '../errors/pricing-error';
import { findDuplicateKey } from './json-duplicate-keys';
import { parsePriceBook, type PriceBook } from '../price-book/price-book';
import { NO_PROGRESS, type Progress } from '../price-book/progress';

/** A file the CLI reads (a price book, a plan) that cannot be read, is not JSON, or breaks its format: nothing is written. */
export class PriceBookFileError extends PricingError {
  constructor(message: string) {
    super(PricingErrorCode.PriceBookFile, message);
  }
}

/** The largest book read when the caller names no bound: 512 MiB (the CLI's PRICE_BOOK_MAX_BYTES). */
export const DEFAULT_PRICE_BOOK_MAX_BYTES = 512 * 1024 * 1024;

export interface ReadPriceBookOptions {
  /** Files larger than this many bytes are refused before they are read. */
  readonly maxBytes?: number;
  /** Reports the bytes read. */
  readonly progress?: Progress;
  /** Where a relative path starts: where the command was typed (the CLI's INIT_CWD). Default: the process's directory. */
  readonly cwd?: string;
  /** What `-` names: standard input. Absent: `-` is a file of that name. */
  readonly stdin?: NodeJS.ReadableStream;
}

/** The name that stands for standard input on the command line. */
export const STDIN = '-';

/** Bytes asked of each read: progress moves at least this often. */
const READ_CHUNK = 1024 * 1024;
// Opening a FIFO without O_NONBLOCK waits for a writer; O_NOCTTY keeps a terminal device from
// becoming the CLI's controlling terminal. Neither changes how a regular file is read.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/**
 * Reads and checks a price book file, reporting the bytes read; every problem is in the error's
 * message. Only a regular file of at most `maxBytes` is read: a FIFO, a device or a directory is
 * refused before anything is read from it, as is a file over the bound, and reading stops as
 * soon as a file growing while it is read passes the bound.
 */
export async function readPriceBookFile(path: string, options: ReadPriceBookOptions = {}): Promise<PriceBook> {
  return parsePriceBookText(textOf(path, await readFileBytes(path, options)), path);
}

/** A price book file read, and the SHA-256 of its bytes (lowercase hex): what a plan file names. */
export interface DigestedPriceBook {
  readonly book: PriceBook;
  readonly sha256: string;
}

/** As readPriceBookFile, with the SHA-256 of the bytes read. */
export async function readPriceBookFileAndDigest(
  path: string,
  options: ReadPriceBookOptions = {},
): Promise<DigestedPriceBook> {
  const bytes = await readFileBytes(path, options);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { book: parsePriceBookText(textOf(path, bytes), path), sha256 };
}

/** Checks the text of a price book file named `path`: its JSON, then the format (PriceBookFileError). */
export function parsePriceBookText(text: string, path: string): PriceBook {
  const parsed = parsePriceBook(parseJsonText(text, path));
  if ('errors' in parsed) {
    throw new PriceBookFileError(`${path}: refused, nothing was written:\n  ${listProblems(parsed.errors)}`);
  }
  return parsed.book;
}

/**
 * The bytes of the regular file `path`, of at most `maxBytes` (PRICE_BOOK_MAX_BYTES; default
 * DEFAULT_PRICE_BOOK_MAX_BYTES), reporting the bytes read; PriceBookFileError when it cannot be.
 */
export async function readFileBytes(path: string, options: ReadPriceBookOptions = {}): Promise<Buffer> {
  const maxBytes = options.maxBytes ?? DEFAULT_PRICE_BOOK_MAX_BYTES;
  const progress = options.progress ?? NO_PROGRESS;
  if (path === STDIN && options.stdin) return readStreamBounded(options.stdin, maxBytes);
  const absolute = resolve(options.cwd ?? '.', path);
  // A stat first, so that a device is not even opened (opening some has effects of its own);
  // the fstat of the open descriptor below is what holds if the path changes in between.
  refuseUnlessReadable(path, await readingStep(path, () => stat(absolute)), maxBytes);
  const handle = await readingStep(path, () => open(absolute, OPEN_FLAGS));
  try {
    const stats = await readingStep(path, () => handle.stat());
    refuseUnlessReadable(path, stats, maxBytes);
    progress.start('reading', stats.size, 'bytes');
    return await readBounded(path, handle, stats.size, maxBytes, progress);
  } finally {
    await handle.close();
  }
}

/**
 * The bytes of standard input, at most `maxBytes`: refused as soon as more come (a pipe has no
 * size to check first). Its size is not known ahead, so no progress is shown for it.
 */
async function readStreamBounded(stream: NodeJS.ReadableStream, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      length += bytes.length;
      if (length > maxBytes) {
        throw new PriceBookFileError(
          `standard input is more than PRICE_BOOK_MAX_BYTES (${maxBytes} bytes): refused, nothing was written`,
        );
      }
      chunks.push(bytes);
    }
  } catch (error) {
    if (error instanceof PriceBookFileError) throw error;
    throw new PriceBookFileError(`cannot read standard input: ${foreignMessage((error as Error).message)}`);
  }
  return Buffer.concat(chunks, length);
}

/** The bytes of the file `path` as text (UTF-8). */
export function textOf(path: string, bytes: Buffer): string {
  try {
    return bytes.toString('utf8');
  } catch (error) {
    // V8 strings hold at most buffer.constants.MAX_STRING_LENGTH (2^29 - 24) characters.
    throw new PriceBookFileError(
      `cannot read ${path}: ${bytes.length} bytes do not fit in one string (${(error as Error).message})`,
    );
  }
}

/** Reads at most `maxBytes` + 1 bytes: one more than the bound tells a file that grew past it. */
async function readBounded(
  path: string,
  handle: FileHandle,
  size: number,
  maxBytes: number,
  progress: Progress,
): Promise<Buffer> {
  let buffer = Buffer.allocUnsafe(Math.min(size, maxBytes) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > maxBytes) {
        throw new PriceBookFileError(
          `${path} grew past PRICE_BOOK_MAX_BYTES (${maxBytes} bytes) while it was read: refused, nothing was written`,
        );
      }
      const larger = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(2 * length, READ_CHUNK)));
      buffer.copy(larger, 0, 0, length);
      buffer = larger;
    }
    const target = buffer;
    const { bytesRead } = await readingStep(path, () =>
      handle.read(target, length, Math.min(READ_CHUNK, target.length - length), null),
    );
    if (bytesRead === 0) return buffer.subarray(0, length);
    progress.update((length += bytesRead));
  }
}

function refuseUnlessReadable(path: string, stats: Stats, maxBytes: number): void {
  if (!stats.isFile()) {
    throw new PriceBookFileError(
      `cannot read ${path}: it is ${kindOf(stats)}, not a regular file; only a regular file is read`,
    );
  }
  if (stats.size > maxBytes) {
    throw new PriceBookFileError(
      `${path} is ${stats.size} bytes, more than PRICE_BOOK_MAX_BYTES (${maxBytes} bytes): refused, nothing was written`,
    );
  }
}

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'neither a file nor a directory';
}

/**
 * The JSON of the file `path`: PriceBookFileError when it is not JSON, or when an object of it has
 * a key twice (JSON.parse would keep the last one without a word).
 */
export function parseJsonText(text: string, path: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // V8's message quotes part of the text: bounded, as every quote of the book is.
    throw new PriceBookFileError(`${path} is not valid JSON: ${foreignMessage((error as Error).message)}`);
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate) {
    throw new PriceBookFileError(
      `${path} has the key ${quoteValue(duplicate.key)} twice in one object (line ${duplicate.line}): ` +
        'JSON readers keep either one, so the file is refused',
    );
  }
  return json;
}

/** Runs a step of reading the file, its failure a PriceBookFileError that names the file. */
async function readingStep<T>(path: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof PriceBookFileError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new PriceBookFileError(
      // Node's message repeats the path in full: bounded, since this message names it already.
      `cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : foreignMessage((error as Error).message)}`,
    );
  }
}
