import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DataSource } from 'typeorm';
import { runCli, spawnCli, type CliResult } from './cli';
import {
  dumpDatabase,
  untilWritesPublished,
  useTestDatabase,
  type TestDatabase,
  type TestDatabaseOptions,
} from './database';
import { useTempDir } from './temp-dir';

// What the specs of the price book CLI share (test/cli/, docs/price-book-cli.md): a database with
// the CLI on it, price book files, and the shapes of its output.

export const SAMPLE = resolve(__dirname, '../../apps/control-plane/sample/price-book.json');
/** The export of a migrated database without prices: the availability the migration set. */
export const EMPTY_BOOK = {
  products: [
    { product_key: 'storage.io1', on_sale: false },
    { product_key: 'storage.st1', on_sale: false },
  ],
  prices: [],
};
const DAY = 86_400_000;

export async function sampleBook(): Promise<unknown> {
  return JSON.parse(await readFile(SAMPLE, 'utf8'));
}

/** Runs the tasks, at most `limit` at a time, and returns their results in order. */
export async function inParallel<T>(tasks: readonly (() => Promise<T>)[], limit = 3): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** An instant `days` from now, to the second, in RFC 3339. */
export function inDays(days: number): string {
  const ms = Math.floor((Date.now() + days * DAY) / 1000) * 1000;
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

export interface Row {
  id: string;
  product_key: string;
  organization_id: string | null;
  unit_type: string;
  unit_count: number;
  amount: string;
  valid_from: Date;
  valid_until: Date | null;
  recorded_at: Date;
  superseded_by: string | null;
}

/** The records of one key and scope, oldest first. */
export async function recordsOf(dataSource: DataSource, productKey: string, organizationId: string | null = null) {
  const rows: Row[] = await dataSource.query(
    `SELECT id::text, product_key, organization_id, unit_type, unit_count, amount::text, valid_from, valid_until,
            recorded_at, superseded_by::text
       FROM price_record WHERE product_key = $1 AND organization_id IS NOT DISTINCT FROM $2 ORDER BY valid_from`,
    [productKey, organizationId],
  );
  return rows;
}

export async function versionOf(dataSource: DataSource): Promise<string> {
  const rows: { version: string }[] = await dataSource.query(`SELECT version::text FROM price_book_version`);
  return rows[0].version;
}

export function price(
  productKey: string,
  amount: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const unit = productKey.startsWith('storage.')
    ? { unit_type: 'gib_hours', unit_count: 730 }
    : productKey.startsWith('network.vpc_')
      ? { unit_type: 'gb', unit_count: 1 }
      : { unit_type: 'seconds', unit_count: 3600 };
  return { product_key: productKey, ...unit, amount, ...extra };
}

/** Environment variables for one run of the CLI, over its DATABASE_URL. */
export type CliEnv = Record<string, string>;

export interface RefusalOptions {
  /** The exit code expected (docs/price-book-cli.md, "Exit codes"): 3 (refused, the default), 64 (a usage error), ... */
  readonly code?: number;
  readonly env?: CliEnv;
}

/** A test database with the CLI run against it. */
export interface CliDatabase {
  readonly url: string;
  readonly dataSource: DataSource;
  /** The CLI run in this process (support/cli.ts); an object after the arguments is more environment. */
  cli(...args: string[] | [...string[], CliEnv]): Promise<CliResult>;
  /** The CLI in a process of its own, for what only a process shows (exit, pipes). */
  spawned(...args: string[]): Promise<CliResult>;
  /** Imports `book` (an object as JSON, or raw text) from a file of its own. */
  import(book: unknown): Promise<CliResult>;
  /**
   * Runs the CLI (with `env`, if given), expects exit `code` (3, refused, unless given), nothing on
   * stdout, the message on stderr (if given), and the database exactly as before.
   */
  expectRefused(args: string[], message?: string | RegExp, options?: RefusalOptions): Promise<CliResult>;
  /** Drops it before the describe's end. */
  close(): Promise<void>;
}

/** useCliDatabase(): the describe's database with the CLI on it, its book files, and more databases. */
export interface CliFixture extends CliDatabase {
  /** A directory of the describe's own. */
  readonly dir: string;
  /** Writes a price book (an object as JSON, or raw text) to a file of its own. */
  bookFile(book: unknown): Promise<string>;
  /** Another database with the CLI on it (holding `book`, if given), made now, dropped with the describe's. */
  create(book?: unknown): Promise<CliDatabase>;
}

/**
 * The describe's database (useTestDatabase), holding `book` first (written directly, not through
 * the CLI), if given, or what a function given returns; with the CLI run against it.
 */
export function useCliDatabase(book?: TestDatabaseOptions['book']): CliFixture {
  const dir = useTempDir('price-book-cli');
  const database = useTestDatabase({ book });
  let files = 0;
  const bookFile = (content: unknown): Promise<string> => dir.write(`book-${++files}.json`, content);
  const on = (db: TestDatabase): CliDatabase => {
    // A write takes effect at its publication instant, after the CLI exits: waited for, so that what
    // a test reads next (the list an app serves, show) holds it (docs/decisions.md, "One clock").
    const published = async (result: CliResult, url = db.url): Promise<CliResult> => {
      await untilWritesPublished(db.dataSource);
      // Every run that connected said where, first, and it was the database it was given.
      if (result.target !== undefined) expectTarget(result.target, url);
      return result;
    };
    const cli = async (...args: string[] | [...string[], CliEnv]) => {
      const last = args[args.length - 1];
      const [argv, env] = typeof last === 'object' ? [args.slice(0, -1) as string[], last] : [args as string[], {}];
      return published(await runCli(argv, { DATABASE_URL: db.url, ...env }), env.DATABASE_URL);
    };
    return {
      get url() {
        return db.url;
      },
      get dataSource() {
        return db.dataSource;
      },
      cli,
      spawned: async (...args: string[]) => published(await spawnCli(args, { DATABASE_URL: db.url })),
      import: async (content: unknown) => cli('import', await bookFile(content)),
      async expectRefused(args, message, { code = 3, env = {} } = {}) {
        const before = await dumpDatabase(db.dataSource);
        const result = await cli(...args, env);
        expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: '' });
        if (typeof message === 'string') expect(result.stderr).toContain(message);
        else if (message) expect(result.stderr).toMatch(message);
        expect(await dumpDatabase(db.dataSource)).toBe(before);
        return result;
      },
      close: () => db.close(),
    };
  };
  const fixture = Object.assign(on(database), {
    bookFile,
    create: async (more?: unknown) => on(await database.create({ book: more })),
  });
  return Object.defineProperty(fixture, 'dir', { get: () => dir.path }) as CliFixture;
}

/**
 * Expects a target line (docs/price-book-cli.md, "Which database") that names the host, port and
 * database of `url`, the role and PostgreSQL's version, and the price book's version, as words or
 * (--json) as JSON; never a password.
 */
export function expectTarget(target: string, url: string): void {
  const { hostname, port, pathname, password } = new URL(url);
  if (password) expect(target).not.toContain(password);
  const fields = target.startsWith('{')
    ? (JSON.parse(target) as { target: Record<string, unknown> }).target
    : Object.fromEntries(
        target
          .replace(/^target /, '')
          .split(' ')
          .map((word) => word.split('=') as [string, string]),
      );
  expect({ ...fields, port: String(fields.port) }).toEqual({
    host: hostname,
    port: port || '5432',
    database: pathname.slice(1),
    role: expect.stringMatching(/\S/),
    postgresql: expect.stringMatching(/^\d+\.\S+$/),
    price_book_version: target.startsWith('{') ? expect.anything() : expect.stringMatching(/^(\d+|none)$/),
    via: 'DATABASE_URL',
  });
}

/** A plan line (docs/price-book-cli.md, "The plan"): kind, product key, scope, then what happens. */
const PLAN_LINE = /^(new|change|end|on-sale|off-sale) +[a-z0-9_.]+ +(list|org:[A-Za-z0-9_.-]+|-)( {2,}\S.*)?$/;

/** The lines before the summary: one per change. */
export function planLines(stdout: string): string[] {
  return stdout.split('\n').slice(0, -2);
}

/** A writer that found the price book locked said so (docs/price-book-cli.md, "Two writers at once"). */
export const LOCK_WAIT = /^the price book is locked by .+: waiting up to \d+ s for it \(--lock-timeout\)$/;

/** stderr without the lines of a writer that waited for another (LOCK_WAIT): writes run at once may wait. */
export function withoutLockWaits(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => !LOCK_WAIT.test(line))
    .join('\n');
}

/** Exit 0, a plan line per change, then the summary line; on stderr nothing, but that it waited for another writer. */
export function expectApplied(result: CliResult): void {
  expect({ code: result.code, stderr: withoutLockWaits(result.stderr) }).toEqual({ code: 0, stderr: '' });
  const lines = result.stdout.split('\n');
  expect(lines.pop()).toBe('');
  expect(lines.pop()).toMatch(/^applied at \d{4}-\d\d-\d\dT[\d:.]+Z: \d+ prices set, \d+ ended, /);
  for (const line of lines) expect(line).toMatch(PLAN_LINE);
}

export function expectNothingToChange(result: CliResult): void {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(result.stdout).toMatch(/^nothing to change: everything in .* is already recorded\n$/);
}

/** Importing each of `books` again says "nothing to change" and leaves the database as it was. */
export async function expectImportsChangeNothing(f: CliDatabase, ...books: unknown[]): Promise<void> {
  const dump = await dumpDatabase(f.dataSource);
  for (const book of books) expectNothingToChange(await f.import(book));
  expect(await dumpDatabase(f.dataSource)).toBe(dump);
}

/** The plan lines of a run, the instant of a dry run's `valid_from`-less prices masked. */
export function linesOf(result: CliResult): string {
  return planLines(result.stdout).join('\n');
}
