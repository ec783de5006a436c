import { listPrice, runPriceBookCommandLine } from '@app/pricing/testing';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dumpDatabase, useTestDatabase } from './support/database';
import { useTempDir } from './support/temp-dir';

// @app/pricing/testing's command line runner (docs/using-pricing.md, "Test support"), as another
// team's spec uses it: on its own test database, the CLI's output and exit codes.

const test = useTestDatabase();
const temp = useTempDir('testing-support');

it('imports a book as the CLI does, recorded as the given actor, and reads it back', async () => {
  const file = join(temp.path, 'book.json');
  const entry = listPrice('compute.t1.1', 'seconds', 3600, '0.2500', '2026-01-01T00:00:00Z');
  await writeFile(file, JSON.stringify({ prices: [entry] }));
  const imported = await runPriceBookCommandLine(test.dataSource, ['import', file], { actor: 'billing-tests' });
  expect(imported).toEqual({
    code: 0,
    stdout: expect.stringMatching(
      /^new {7}compute\.t1\.1 +list {2}0\.2500 per 3600 seconds from 2026-01-01T00:00:00Z\napplied at \S+Z: 1 prices set, 0 ended, 0 availability changes, 0 unchanged \(version 2\)\n$/,
    ),
    stderr: '',
  });
  const history = await runPriceBookCommandLine(test.dataSource, ['history', 'compute.t1.1', '--json'], {
    now: new Date('2026-06-01T00:00:00Z'),
  });
  expect(history.code).toBe(0);
  expect(JSON.parse(history.stdout)).toMatchObject({
    records: [{ status: 'in-force', amount: '0.2500' }],
    changes: [{ change: 'set', actor: 'billing-tests', reason: null }],
  });
});

it('gives the exit codes of the CLI: 2 with the usage for wrong usage, 1 for a refusal, nothing written', async () => {
  const before = await dumpDatabase(test.dataSource);
  const usage = await runPriceBookCommandLine(test.dataSource, ['import']);
  expect(usage).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining('import takes one file') });
  expect(usage.stderr).toContain('usage: npm run -s pricing -- <command>');
  const file = join(temp.path, 'bad.json');
  await writeFile(
    file,
    JSON.stringify({ prices: [{ ...listPrice('compute.t1.1', 'seconds', 3600, '-1', '2026-01-01T00:00:00Z') }] }),
  );
  const refused = await runPriceBookCommandLine(test.dataSource, ['import', file], { actor: 'billing-tests' });
  expect(refused).toEqual({
    code: 1,
    stdout: '',
    stderr: expect.stringMatching(
      /\.json: refused, nothing was written:\n {2}prices\[0\]\.amount: "-1" is not a decimal amount/,
    ),
  });
  expect(await dumpDatabase(test.dataSource)).toBe(before);
});
