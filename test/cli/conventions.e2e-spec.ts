import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, REGISTER, runCli, runCommand, spawnCli } from '../support/cli';
import { applyBook } from '../support/database';
import { expectApplied, expectTarget, inDays, price, useCliDatabase } from '../support/price-book-cli';
import { withDatabase } from '../support/template-database';

// The price book CLI as the ecosystem's CLIs are (docs/price-book-cli.md, "Conventions"): it says
// where it writes, first; --json on every command that prints data, errors as JSON too; exit codes
// that tell failures apart; paths from where the command was typed, - for stdin; `changes` filters
// and a quiet end on a closed pipe; --quiet; NO_COLOR and TERM=dumb.

const script = spawnSync('script', ['--version']).status === 0 ? it : it.skip;
/** What starts a terminal's control sequences. */
const ESC = '\u001b';

describe('where it writes: the target, first, on stderr', () => {
  const f = useCliDatabase({ prices: [price('compute.g2.4', '0.0610', { valid_from: '2026-01-01T00:00:00Z' })] });

  it('is said by every command that connects, naming host, port, database, role, PostgreSQL and the price book’s version, never the password', async () => {
    // One instant for the price and its withdrawal: two calls of inDays may fall either side of a second.
    const from = inDays(30);
    const book = await f.bookFile({ prices: [price('compute.t1.1', '1.00', { valid_from: from })] });
    const usage = await f.bookFile('product_key,start,end\ncompute.g2.4,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z\n');
    const plan = join(f.dir, 'plan.json');
    const runs: string[][] = [
      ['import', '--dry-run', '--plan-out', plan, book],
      ['apply', plan, book],
      ['import', book],
      ['export'],
      ['show'],
      ['history', 'compute.g2.4'],
      ['changes'],
      ['withdraw', 'compute.t1.1', '--valid-from', from],
      ['verify'],
      [
        'focus',
        usage,
        '--provider',
        'P',
        '--billing-account',
        'a1',
        '--billing-period-start',
        '2026-03-01T00:00:00Z',
        '--billing-period-end',
        '2026-04-01T00:00:00Z',
      ],
      ['migrate'],
    ];
    expect(new URL(f.url).password).not.toBe(''); // the target never says it (expectTarget)
    for (const args of runs) {
      const result = await f.cli(...args);
      expect({ args, code: result.code, target: result.target === undefined }).toEqual({
        args,
        code: 0,
        target: false,
      });
      expectTarget(result.target!, f.url);
    }
    const json = await f.cli('export', '--json');
    expect(json.target).toMatch(/^\{"target":\{"host":/);
    expectTarget(json.target!, f.url);
  });

  it('refuses the embedded PostgreSQL in production (DATABASE_URL forgotten): exit 7, nothing started or created', async () => {
    const dataDir = join(f.dir, 'never-made');
    const book = await f.bookFile({ prices: [price('compute.p1.1', '1.00')] });
    for (const args of [['import', book], ['import', '--dry-run', book], ['migrate'], ['show']]) {
      const result = await runCli(args, { NODE_ENV: 'production', DATA_DIR: dataDir });
      expect({ args, code: result.code, stdout: result.stdout, target: result.target }).toEqual({
        args,
        code: 7,
        stdout: '',
        target: undefined,
      });
      expect(result.stderr).toContain('DATABASE_URL is required when NODE_ENV=production');
    }
    expect(existsSync(dataDir)).toBe(false);
    const empty = await runCli(['import', book], { DATABASE_URL: '' });
    expect({ code: empty.code, stderr: empty.stderr }).toEqual({
      code: 7,
      stderr:
        'invalid configuration:\n  DATABASE_URL is set but empty: set it to a postgres:// URL, or unset it for the embedded PostgreSQL under DATA_DIR (development only)\n',
    });
  });

  it('tells a database that cannot be reached (exit 5) from a refused book (3), a usage error (64) and a failure (1)', async () => {
    const book = await f.bookFile({ prices: [price('compute.u1.1', '1.00')] });
    const closed = new URL(f.url);
    closed.port = '9'; // nothing listens there
    const refused = await runCli(['import', book], { DATABASE_URL: closed.toString(), DATABASE_TIMEOUT_S: '2' });
    expect({ code: refused.code, target: refused.target }).toEqual({ code: 5, target: undefined });
    expect(refused.stderr).toMatch(/^cannot connect to the database \S+ at \S+@\S+:9: .*; nothing was written\n$/);
    expect(refused.stderr).not.toContain(closed.password);
    const wrongPassword = new URL(f.url);
    wrongPassword.password = 'not-the-password';
    const denied = await runCli(['show'], { DATABASE_URL: wrongPassword.toString() });
    expect(denied.code).toBe(5);
    expect(denied.stderr).toMatch(/^cannot connect to the database .*password authentication failed/);
    expect(denied.stderr).not.toContain('nothing was written'); // show writes nothing: nothing to say of it
    const missing = await runCli(['show'], { DATABASE_URL: withDatabase(f.url, 'no_such_database') });
    expect(missing.code).toBe(5);
  });
});

describe('--json on every command that prints data, and errors as JSON', () => {
  const f = useCliDatabase({ prices: [price('compute.g2.4', '0.0610', { valid_from: '2026-01-01T00:00:00Z' })] });

  it('prints JSON on stdout, the target as JSON on stderr', async () => {
    const scheduled = inDays(30);
    const book = await f.bookFile({ prices: [price('compute.j1.1', '1.00', { valid_from: scheduled })] });
    const plan = join(f.dir, 'plan.json');
    const runs: [string[], (json: unknown) => void][] = [
      [['import', '--dry-run', '--plan-out', plan, book], (json) => expect(json).toMatchObject({ dry_run: true })],
      [['apply', plan, book], (json) => expect(json).toMatchObject({ dry_run: false, summary: { prices_set: 1 } })],
      [['export'], (json) => expect(json).toMatchObject({ products: expect.any(Array), prices: expect.any(Array) })],
      [
        ['show'],
        (json) => expect(json).toMatchObject({ price_list: { currency: 'EUR' }, products: expect.any(Array) }),
      ],
      [
        ['history', 'compute.j1.1'],
        (json) => expect(json).toMatchObject({ product_key: 'compute.j1.1', on_sale: true }),
      ],
      [['changes', '--product', 'compute.j1.1'], (json) => expect(json).toMatchObject({ product_key: 'compute.j1.1' })],
      [
        ['withdraw', 'compute.j1.1', '--valid-from', scheduled],
        (json) => expect(json).toEqual({ withdrawn_at: expect.any(String), version: expect.any(String) }),
      ],
      [['verify'], (json) => expect(json).toEqual({ entries: expect.any(Number), head: expect.any(String) })],
      [['migrate'], (json) => expect(json).toEqual({ migrated: [] })],
    ];
    for (const [args, check] of runs) {
      const result = await f.cli(...args, '--json');
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
      check(JSON.parse(result.stdout));
      expect(JSON.parse(result.target!)).toMatchObject({ target: { via: 'DATABASE_URL' } });
    }
  });

  it('prints a refusal as JSON on stderr, with its code, exit code and problems; nothing on stdout', async () => {
    const book = await f.bookFile({ prices: [price('compute.j2.1', '-1')] });
    const refused = await f.expectRefused(['import', book, '--json'], undefined, { code: 3 });
    expect(JSON.parse(refused.stderr)).toEqual({
      error: {
        code: 'PRICE_BOOK_FILE',
        exit_code: 3,
        message: expect.stringContaining('prices[0].amount: "-1" is not a decimal amount') as string,
      },
    });
    const overlap = await f.bookFile({
      prices: [price('compute.g2.4', '0.0700', { valid_from: '2026-02-01T00:00:00Z' })],
    });
    const planned = await f.expectRefused(['import', '--dry-run', overlap, '--json'], undefined, { code: 3 });
    expect(JSON.parse(planned.stderr)).toEqual({
      error: {
        code: 'PRICE_BOOK_REFUSED',
        exit_code: 3,
        message: expect.stringMatching(/^refused, nothing was written:/) as string,
        problems: [expect.stringMatching(/^prices\[0\]\.valid_from: 2026-02-01T00:00:00Z is in the past/)],
      },
    });
  });
});

describe('files: from where the command was typed, or standard input', () => {
  const f = useCliDatabase();
  const BOOK = { prices: [price('compute.f1.1', '1.00', { valid_from: '2026-01-01T00:00:00Z' })] };

  it('reads a relative path from where it was typed: INIT_CWD under npm, else its own directory', async () => {
    await f.bookFile(BOOK); // book-1.json in the describe's directory
    const typed = await runCli(['import', '--dry-run', 'book-1.json'], { DATABASE_URL: f.url }, { cwd: f.dir });
    expect(typed.code).toBe(0);
    expect(typed.stdout).toMatch(/^new +compute\.f1\.1 /);
    // The process, as `npm run -s pricing` runs it from the project's directory with INIT_CWD set.
    const underNpm = await spawnCli(['import', '--dry-run', 'book-1.json'], { DATABASE_URL: f.url, INIT_CWD: f.dir });
    expect({ code: underNpm.code, first: underNpm.stdout.split('\n')[0] }).toEqual({
      code: 0,
      first: typed.stdout.split('\n')[0],
    });
    const elsewhere = await runCli(['import', '--dry-run', 'book-1.json'], { DATABASE_URL: f.url });
    expect(elsewhere.code).toBe(3);
    expect(elsewhere.stderr).toBe('cannot read book-1.json: no such file\n');
  });

  it('reads - from standard input: a book, or a plan, by a pipe', async () => {
    const text = JSON.stringify(BOOK);
    const piped = await runCli(['import', '--dry-run', '-'], { DATABASE_URL: f.url }, { stdin: text });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toMatch(/^new +compute\.f1\.1 /);
    expect(piped.stdout).toMatch(/nothing to change|dry run at \S+Z: 1 prices set/);
    const plan = join(f.dir, 'stdin-plan.json');
    const book = await f.bookFile(BOOK);
    expect((await f.cli('import', '--dry-run', '--plan-out', plan, book)).code).toBe(0);
    const applied = await runCli(['apply', '-', book], { DATABASE_URL: f.url }, { stdin: await readFile(plan) });
    expectApplied(applied);
    const spawned = await spawnCli(['import', '-'], { DATABASE_URL: f.url }, text);
    expect(spawned.stdout).toBe(`nothing to change: everything in - is already recorded\n`);
    const both = await runCli(['apply', '-', '-'], { DATABASE_URL: f.url }, { stdin: text });
    expect({ code: both.code, stderr: both.stderr.split('\n')[0] }).toEqual({
      code: 64,
      stderr: 'only one of the plan and the book can be - (standard input)',
    });
  });
});

describe('changes: filters, and a reader that stops reading', () => {
  const f = useCliDatabase();
  beforeAll(async () => {
    // Three times what a pipe holds (64 KiB): the reader stops long before the end.
    await applyBook(f.dataSource, {
      prices: Array.from({ length: 1_500 }, (_, i) =>
        price(`compute.h${i % 5}.${i}`, '0.0100', { valid_from: '2026-01-01T00:00:00Z' }),
      ),
    });
    await applyBook(f.dataSource, { prices: [price('compute.h0.0', '0.0200')] });
  }, 60_000);

  it('--product keeps one key, --limit the last n, --since and --until a window', async () => {
    const all = (await f.cli('changes')).stdout.trimEnd().split('\n');
    expect(all).toHaveLength(2 + 1_500 + 2); // the first migration's availability, the sets, a set and an end
    const key = (await f.cli('changes', '--product', 'compute.h0.0')).stdout.trimEnd().split('\n');
    expect(key.map((line) => line.split(/ {2,}/).slice(1, 3))).toEqual([
      ['set', 'compute.h0.0'],
      ['set', 'compute.h0.0'],
      ['end', 'compute.h0.0'],
    ]);
    const last = (await f.cli('changes', '--limit', '2')).stdout.trimEnd().split('\n');
    expect(last).toEqual(all.slice(-2));
    const lastOfKey = (await f.cli('changes', '--product', 'compute.h0.0', '--limit', '1', '--json')).stdout;
    expect(JSON.parse(lastOfKey)).toMatchObject({
      limit: 1,
      changes: [{ change: 'end', product_key: 'compute.h0.0' }],
    });
    const since = all[all.length - 1].slice(0, 24);
    expect((await f.cli('changes', '--since', since)).stdout.trimEnd().split('\n')).toEqual(all.slice(-2));
    expect((await f.cli('changes', '--until', since)).stdout.trimEnd().split('\n')).toEqual(all.slice(0, -2));
  });

  it('`changes | head -1` prints one line and ends quietly: exit 0, no stack trace', async () => {
    const piped = await runCommand(
      'bash',
      [
        '--norc',
        '--noprofile',
        '-c',
        `set -o pipefail; "${process.execPath}" --require "${REGISTER}" "${CLI}" changes | head -1`,
      ],
      { DATABASE_URL: f.url },
    );
    expect(piped.code).toBe(0);
    expect(piped.stdout.split('\n')).toEqual([expect.stringMatching(/^\S+Z {2}availability {4}storage\.io1 /), '']);
    expect(piped.stderr).toMatch(/^target [^\n]*\n$/); // the target, and nothing else: no EPIPE, no stack
  }, 30_000);
});

describe('--quiet, progress, NO_COLOR and TERM=dumb', () => {
  const f = useCliDatabase();

  it('--quiet prints the summary alone', async () => {
    const quiet = await f.cli(
      'import',
      await f.bookFile({ prices: [price('compute.q1.1', '1'), price('compute.q1.2', '1')] }),
      '-q',
    );
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toMatch(
      /^applied at \S+Z: 2 prices set, 0 ended, 0 availability changes, 0 unchanged \(version \d+\)\n$/,
    );
  });

  /** What a terminal shows of a run of the CLI with `env`, and its stdout apart. */
  async function onTerminal(args: string, env: Record<string, string>): Promise<string> {
    const log = join(f.dir, `terminal-${Object.keys(env).join('-')}.txt`);
    const result = await runCommand(
      'script',
      ['-qec', `"${process.execPath}" --require "${REGISTER}" "${CLI}" ${args} > /dev/null`, log],
      {
        DATABASE_URL: f.url,
        ...env,
      },
    );
    expect(result.code).toBe(0);
    return readFile(log, 'utf8');
  }

  script(
    'shows progress with an estimate on a terminal, and none on TERM=dumb, which cannot redraw a line',
    async () => {
      const book = await f.bookFile({
        prices: Array.from({ length: 3_000 }, (_, i) => price(`compute.d${i % 3}.${i}`, '0.01')),
      });
      expect(await onTerminal(`import --dry-run "${book}"`, { TERM: 'xterm' })).toMatch(
        /checking +\[.*\] \d+% .* elapsed, about \S+ left/,
      );
      const dumb = await onTerminal(`import --dry-run "${book}"`, { TERM: 'dumb' });
      expect(dumb).not.toMatch(/checking|reading/);
      expect(dumb).not.toContain(ESC);
    },
    60_000,
  );

  script(
    'colours log lines on a terminal only without NO_COLOR and TERM=dumb',
    async () => {
      // migrate as the runtime role itself warns (docs/operations.md, "Two roles"): a log line.
      // Another URL of the same role: the same URL twice is a deploy step, which checks no runtime role.
      const env = { DATABASE_MIGRATION_URL: `${f.url}?application_name=owner`, LOG_FORMAT: 'pretty' };
      const warning = /WARN.*DATABASE_MIGRATION_URL connects as the runtime role/;
      const coloured = await onTerminal('migrate', { ...env, TERM: 'xterm' });
      expect(coloured).toMatch(warning);
      expect(coloured).toContain(`${ESC}[33m`); // WARN in yellow
      for (const plain of [{ NO_COLOR: '1', TERM: 'xterm' }, { TERM: 'dumb' }] as Record<string, string>[]) {
        const text = await onTerminal('migrate', { ...env, ...plain });
        expect(text).toMatch(warning);
        expect(text).not.toContain(`${ESC}[`);
      }
    },
    60_000,
  );
});
