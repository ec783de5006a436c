import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, REGISTER, runCommand } from '../support/cli';
import { applyBook } from '../support/database';
import { expectApplied, expectImportsChangeNothing, inDays, linesOf, planLines } from '../support/price-book-cli';
import { price, useCliDatabase } from '../support/price-book-cli';

// Books of thousands of prices: read and written a page at a time, and progress on a terminal.

// PAGE in database/price-book-rows.ts and BATCH in database/write-plan.ts: 5,000 records a statement.
describe('books of more than one page of records (the database is read and written 5,000 records at a time)', () => {
  const f = useCliDatabase();
  const prices = Array.from({ length: 12_001 }, (_, i) =>
    price(`compute.page${i % 10}.${i}`, '0.0610', { valid_from: '2026-01-01T00:00:00Z' }),
  );
  beforeAll(async () => {
    await applyBook(f.dataSource, { prices });
  }, 120_000);

  it('importing the same book again changes nothing, and export has every record once', async () => {
    await expectImportsChangeNothing(f, { prices });
    const exported = JSON.parse((await f.cli('export')).stdout) as { prices: { product_key: string }[] };
    expect(exported.prices).toHaveLength(12_001);
    expect(new Set(exported.prices.map((p) => p.product_key)).size).toBe(12_001);
  }, 60_000);
});

describe('progress of a large book', () => {
  const f = useCliDatabase();
  let file: string;
  // More than one write statement (5,000 rows each), so progress would be reported several times.
  const prices = Array.from({ length: 6_000 }, (_, i) =>
    price(`compute.prog${i % 3}.${i}`, '0.0100', { valid_from: '2026-01-01T00:00:00Z' }),
  );
  beforeAll(async () => {
    file = await f.bookFile({ prices });
  });

  it('shows nothing when stderr is not a terminal, on a dry run and an import', async () => {
    const dryRun = await f.cli('import', file, '--dry-run');
    expect({ code: dryRun.code, stderr: dryRun.stderr }).toEqual({ code: 0, stderr: '' });
    expect(planLines(dryRun.stdout)).toHaveLength(6_000);
    const applied = await f.cli('import', file);
    expectApplied(applied);
    expect(linesOf(applied)).toBe(linesOf(dryRun));
  }, 60_000);

  // `script` (util-linux) runs the CLI on a pseudo-terminal; stdout goes to a file.
  const script = spawnSync('script', ['--version']).status === 0 ? it : it.skip;
  script(
    'shows reading, checking and writing on a terminal, on stderr only: stdout stays clean',
    async () => {
      const out = join(f.dir, 'tty-stdout.txt');
      const log = join(f.dir, 'tty-terminal.txt');
      const second = await f.bookFile({
        prices: prices.map((p) => ({ ...p, amount: '0.0200', valid_from: inDays(10) })),
      });
      const result = await runCommand(
        'script',
        // Published a minute on: a loaded machine took longer than the size-derived instant (refused, exit 3).
        [
          '-qec',
          `"${process.execPath}" --require "${REGISTER}" "${CLI}" import "${second}" --publish-in 60 > "${out}"`,
          log,
        ],
        {
          DATABASE_URL: f.url,
        },
      );
      const terminal = await readFile(log, 'utf8');
      expect({ code: result.code, end: result.code === 0 ? '' : terminal.slice(-500) }).toEqual({ code: 0, end: '' });
      for (const step of ['reading', 'checking', '6000/6000 entries', 'writing', '12000/12000 rows']) {
        expect(terminal).toContain(step);
      }
      const stdout = await readFile(out, 'utf8');
      expect(stdout).not.toContain('\u001b'); // no terminal control sequence
      expect(stdout).not.toMatch(/reading|checking|writing/);
      expect(stdout).toMatch(/: 6000 prices set, 6000 ended, 0 availability changes, 0 unchanged \(version \d+\)\n$/);
    },
    60_000,
  );
});
