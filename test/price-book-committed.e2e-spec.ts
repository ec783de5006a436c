import { cliFailure, preparePriceBookCommand, runPriceBookCommand } from '@app/pricing/cli';
import { listPrice } from '@app/pricing/testing';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDir, useTestDatabase } from './support/fixtures';

// A message about data is true: once a write has committed, whatever fails after it (describing or
// printing what it did) is reported as a failure of that, with the change said to be in force.

describe('a price book write that committed before something failed', () => {
  const test = useTestDatabase();
  const temp = useTempDir('committed');

  async function command(...args: string[]) {
    const file = join(temp.path, 'book.json');
    await writeFile(
      file,
      JSON.stringify({ prices: [listPrice('storage.gp1', 'gib_hours', 730, '0.0480', '2026-01-01T00:00:00Z')] }),
    );
    const prepared = await preparePriceBookCommand([...args, file]);
    if (prepared.name === 'help') throw new Error('not a command of the database');
    return prepared;
  }

  const brokenOutput = (): never => {
    throw new Error('stdout is closed');
  };

  it('says the change was committed, with its instant and version, when printing it fails', async () => {
    const error: unknown = await runPriceBookCommand(
      await command('import'),
      test.dataSource,
      brokenOutput,
      new Date(),
    ).catch((e: unknown) => e);
    const { code, message } = cliFailure(error);
    expect(code).toBe(1);
    expect(message).toMatch(
      /^applied at \d{4}-\d\d-\d\dT[\d:.]+Z \(version 2\): the change was committed and is in force, but printing it failed: stdout is closed$/,
    );
    expect(message).not.toContain('nothing was written');
    const rows: { amount: string }[] = await test.dataSource.query(`SELECT amount::text FROM price_record`);
    expect(rows).toEqual([{ amount: '0.0480' }]);
  });

  it('says nothing was written when a dry run, which commits nothing, fails to print', async () => {
    const error: unknown = await runPriceBookCommand(
      await command('import', '--dry-run'),
      test.dataSource,
      brokenOutput,
      new Date(),
    ).catch((e: unknown) => e);
    // The book restates what the first test committed: nothing to change, and a dry run besides.
    expect(cliFailure(error).message).toBe('failed, nothing was written: stdout is closed');
  });
});
