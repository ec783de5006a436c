import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { CLI, FROM_SOURCE, REGISTER, runCli } from '../support/cli';
import { dumpDatabase } from '../support/database';
import { queryAt } from '../support/sql';
import { expectApplied, LOCK_WAIT, price, useCliDatabase, versionOf } from '../support/price-book-cli';

// Interrupts and locks (docs/price-book-cli.md, "Interrupts" and "Two writers at once"): Ctrl-C and
// SIGTERM roll a write back, erase the progress bar (the terminal as it was), say so and exit 130 or
// 143; a writer that finds the price book locked names the holder and waits up to --lock-timeout,
// then applies, or gives up with exit 6, nothing written.

/** What erases the line a progress bar was on (CSI 2 K). */
const ERASE_LINE = '\u001b[2K';

/** The price book's advisory lock (PriceBookWrites: PRICE_BOOK_LOCK). */
const PRICE_BOOK_LOCK = 4_705_212_001;

/** A book of `count` new prices: seconds of checking and writing (a few thousand rows a second). */
function largeBook(count: number, tag: string): unknown {
  return {
    prices: Array.from({ length: count }, (_, i) =>
      price(`compute.${tag}${i % 7}.${i}`, '0.0100', { valid_from: '2026-01-01T00:00:00Z' }),
    ),
  };
}

/** Resolves once `ready()` is true, checked every 50 ms; fails after `timeoutMs`. */
async function until(ready: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The application_name of the session holding the price book's lock in the database at `url`, if any. */
async function lockHolder(url: string): Promise<string | undefined> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = ($1::bigint >> 32)::oid AND l.objid = ($1::bigint & 4294967295)::oid`,
      [PRICE_BOOK_LOCK],
    );
    return rows[0]?.name;
  } finally {
    await client.end();
  }
}

/** The CLI in a process of its own; its output as it comes, and how it ended. */
function startCli(args: readonly string[], env: Record<string, string>) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [...FROM_SOURCE, CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ended = new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
    child.on('close', (code) => done({ code, stdout, stderr })),
  );
  return { child, ended };
}

describe('Ctrl-C and SIGTERM during a large import', () => {
  const f = useCliDatabase();

  // `script` (util-linux) runs the CLI on a pseudo-terminal, whose line discipline turns the ^C
  // typed on it into SIGINT for the CLI, as a person's Ctrl-C does.
  const script = spawnSync('script', ['--version']).status === 0 ? it : it.skip;
  script(
    'Ctrl-C rolls the import back, erases the progress bar, says so and exits 130: the terminal and the database as they were',
    async () => {
      const book = await f.bookFile(largeBook(30_000, 'cc'));
      const log = join(f.dir, 'ctrl-c-terminal.txt');
      const before = await dumpDatabase(f.dataSource);
      const command = `"${process.execPath}" --require "${REGISTER}" "${CLI}" import "${book}"`;
      const terminal = spawn('script', ['-qfec', command, log], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: f.url, TERM: 'xterm' },
      });
      const ended = new Promise<number | null>((done) => terminal.on('close', done));
      const screen = async (): Promise<string> => readFile(log, 'utf8').catch(() => '');
      // Once it writes rows: the transaction holds part of the book.
      await until(async () => (await screen()).includes('writing '), 'the import to write');
      terminal.stdin.write('\u0003');
      expect(await ended).toBe(130);
      const text = await screen();
      // The bar is erased, then what happened is said.
      expect(text).toMatch(
        new RegExp(
          `${ERASE_LINE.replace('[', '\\[')}interrupted by SIGINT \\(Ctrl-C\\): rolled back, nothing was written\r?\n`,
        ),
      );
      // Nothing that a stopped process would leave behind: wrapping and the cursor were never turned off.
      expect(text).not.toContain('\u001b[?7l');
      expect(text).not.toContain('\u001b[?25l');
      expect(await dumpDatabase(f.dataSource)).toBe(before);
      expect(await lockHolder(f.url)).toBeUndefined();
    },
    90_000,
  );

  it('SIGTERM rolls the import back, says so and exits 143, nothing written', async () => {
    const book = await f.bookFile(largeBook(30_000, 'tm'));
    const before = await dumpDatabase(f.dataSource);
    const { child, ended } = startCli(['import', book, '--actor', 'ops'], { DATABASE_URL: f.url });
    await until(
      async () => (await lockHolder(f.url))?.startsWith('pricing import ops@') === true,
      'the import to hold the lock',
    );
    child.kill('SIGTERM');
    const result = await ended;
    expect(result.code).toBe(143);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^target .*\ninterrupted by SIGTERM: rolled back, nothing was written\n$/);
    expect(await dumpDatabase(f.dataSource)).toBe(before);
  }, 90_000);
});

describe('two writers at once', () => {
  const f = useCliDatabase();

  it('the second waits for the first, naming it (application, role, client, since when), then applies', async () => {
    const version = Number(await versionOf(f.dataSource));
    // The first writer is held half way, the price book's lock in hand, until the second waits: a
    // row lock on the version it moves last (publishChange) keeps it from committing.
    const blocker = new Client({ connectionString: f.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT version FROM price_book_version FOR UPDATE');
      const first = startCli(
        // Published 30 s after it begins: held here for as long as the second takes to wait, it still
        // commits before its publication instant (the tests' default delay, 0.6 s, it missed under
        // load, and was refused whole, as docs/decisions.md "One clock" has it).
        [
          'import',
          await f.bookFile({ prices: [price('compute.first.1', '1.00')] }),
          '--actor',
          'ana',
          '--publish-in',
          '30',
        ],
        {
          DATABASE_URL: f.url,
        },
      );
      await until(
        async () => (await lockHolder(f.url))?.startsWith('pricing import ana@') === true,
        'the first writer to hold the lock',
      );
      const second = f.cli(
        'import',
        await f.bookFile({ prices: [price('compute.second.1', '1.00')] }),
        '--actor',
        'bo',
      );
      // Read on connections of their own: a transaction sees one snapshot of pg_stat_activity.
      await until(
        async () =>
          (
            await queryAt(
              f.url,
              `SELECT 1 FROM pg_stat_activity WHERE application_name LIKE 'pricing import bo@%' AND wait_event = 'advisory'`,
            )
          ).length === 1,
        'the second writer to wait for the lock',
      );
      await blocker.query('ROLLBACK');
      const [done, waited] = [await first.ended, await second];
      expect({ code: done.code, stdout: done.stdout }).toEqual({
        code: 0,
        stdout: expect.stringMatching(
          /: 1 prices set, 0 ended, 0 availability changes, 0 unchanged \(version \d+\)\n$/,
        ) as string,
      });
      expectApplied(waited);
      const [waiting] = waited.stderr.split('\n');
      expect(waiting).toMatch(LOCK_WAIT);
      expect(waiting).toMatch(
        new RegExp(
          `^the price book is locked by "pricing import ana@${hostname().replace(/[.]/g, '\\.')}" \\(pid \\d+, role "\\S+", ` +
            `client "127\\.0\\.0\\.1", in a transaction since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\): waiting up to 60 s for it \\(--lock-timeout\\)$`,
        ),
      );
      // One after the other: the second's write comes after the first's.
      const versions = [done.stdout, waited.stdout].map((text) => Number(/\(version (\d+)\)/.exec(text)![1]));
      expect(versions).toEqual([version + 1, version + 2]);
    } finally {
      await blocker.end();
    }
  }, 60_000);

  describe('a holder that keeps the price book longer than --lock-timeout', () => {
    let holder: Client;
    beforeEach(async () => {
      holder = new Client({ connectionString: f.url, application_name: 'nightly-job' });
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [PRICE_BOOK_LOCK]);
    });
    afterEach(async () => {
      await holder.query('ROLLBACK');
      await holder.end();
    });

    it('gives up after --lock-timeout with exit 6, names the holder, nothing written; as JSON with --json', async () => {
      const book = await f.bookFile({ prices: [price('compute.late.1', '1.00')] });
      const refused = await f.expectRefused(['import', book, '--lock-timeout', '1'], undefined, { code: 6 });
      expect(refused.stderr.split('\n')).toEqual([
        expect.stringMatching(
          /^the price book is locked by "nightly-job" \(pid \d+, .*\): waiting up to 1 s for it \(--lock-timeout\)$/,
        ),
        expect.stringMatching(
          /^refused, nothing was written: the price book stayed locked by "nightly-job" \(pid \d+, .*\) for the 1 s this write waits \(--lock-timeout\); try again once it is done, or wait longer with --lock-timeout SECONDS$/,
        ),
        '',
      ]);
      const json = await f.cli(
        'withdraw',
        'compute.late.1',
        '--valid-from',
        '2030-01-01T00:00:00Z',
        '--lock-timeout',
        '0',
        '--json',
      );
      expect(json.code).toBe(6);
      expect(JSON.parse(json.stderr)).toEqual({
        error: {
          code: 'PRICE_BOOK_LOCKED',
          exit_code: 6,
          message: expect.stringContaining('"nightly-job"') as string,
          timeout_ms: 0,
          holder: {
            pid: expect.any(Number) as number,
            application_name: 'nightly-job',
            role: expect.any(String) as string,
            client: '127.0.0.1',
            since: expect.any(String) as string,
          },
        },
      });
    }, 30_000);

    it('is not waited for by a writer of another database: the lock is the book’s, per database', async () => {
      const other = await f.create();
      expectApplied(await other.import({ prices: [price('compute.other.1', '1.00')] }));
    }, 30_000);
  });
});

describe('an interrupt in this process (CliIo.interrupt): a read stops at once, and says nothing of writing', () => {
  const f = useCliDatabase();

  it('stops `changes` with exit 130 and "stopped"', async () => {
    const interrupt = new AbortController();
    interrupt.abort('SIGINT');
    const result = await runCli(['changes'], { DATABASE_URL: f.url }, { interrupt: interrupt.signal });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 130,
      stdout: '',
      stderr: 'interrupted by SIGINT (Ctrl-C): stopped\n',
    });
  });
});
