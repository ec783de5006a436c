import type { CliResult } from '../support/cli';
import { dumpDatabase } from '../support/database';
import { inParallel, price, useCliDatabase } from '../support/price-book-cli';

// Usage errors exit 2 with the usage and write nothing; --help; the process's exit codes.

describe('usage errors exit 2', () => {
  const usageErrors: [string, string[], string][] = [
    ['no command', [], ''],
    ['an unknown command', ['frobnicate'], 'unknown command "frobnicate"'],
    ['import without a file', ['import'], 'import takes one file'],
    ['import with two files', ['import', 'a.json', 'b.json'], 'import takes one file'],
    ['export with an argument', ['export', 'x'], 'export takes no arguments'],
    ['show with an argument', ['show', 'x'], 'show takes no arguments'],
    ['withdraw without an instant', ['withdraw', 'compute.g2.4'], 'withdraw takes --valid-from or --valid-until'],
    [
      'withdraw with both instants',
      ['withdraw', 'compute.g2.4', '--valid-from', '2030-01-01T00:00:00Z', '--valid-until', '2031-01-01T00:00:00Z'],
      'withdraw takes --valid-from or --valid-until',
    ],
    ['withdraw without a key', ['withdraw', '--valid-from', '2030-01-01T00:00:00Z'], 'withdraw takes one product key'],
    [
      'withdraw with a timestamp without offset',
      ['withdraw', 'compute.g2.4', '--valid-from', '2030-01-01T00:00:00'],
      '"2030-01-01T00:00:00" is not an RFC 3339 timestamp with an offset',
    ],
    ['an unknown option', ['export', '--bogus'], "Unknown option '--bogus'"],
    ['an option of another command', ['export', '--dry-run'], '--dry-run is not an option of export'],
    ['--json on export', ['export', '--json'], '--json is not an option of export'],
    ['history without a key', ['history'], 'history takes one product key'],
    ['history with a malformed key', ['history', 'compute.G2'], '"compute.G2" is not compute.<instance_type>'],
    [
      'history with a malformed organization',
      ['history', 'storage.gp1', '--organization', 'org 42'],
      '--organization "org 42": 1 to 64 letters',
    ],
  ];
  const f = useCliDatabase();
  let dumpBefore: string;
  let dumpAfter: string;
  let results: CliResult[];
  beforeAll(async () => {
    dumpBefore = await dumpDatabase(f.dataSource);
    results = await inParallel(
      usageErrors.map(
        ([, args]) =>
          () =>
            f.cli(...args),
      ),
    );
    dumpAfter = await dumpDatabase(f.dataSource);
  }, 120_000);

  it.each(usageErrors.map((entry, index) => [...entry, index] as const))('%s', (_name, _args, message, index) => {
    const result = results[index];
    expect(result.code).toBe(2);
    expect(result.stderr + result.stdout).toContain('usage: npm run -s pricing -- <command>');
    expect(result.stderr).toContain(message);
  });

  it('usage errors write nothing', () => {
    expect(dumpAfter).toBe(dumpBefore);
  });

  it('--help prints the usage and exits 0', async () => {
    const result = await f.spawned('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('usage: npm run -s pricing -- <command>');
  });

  it('the CLI process exits with the same codes: 2 for wrong usage, 1 for a refusal', async () => {
    const [usage, refused] = await Promise.all([
      f.spawned('export', '--bogus'),
      f.spawned('import', await f.bookFile({ prices: [price('compute.g2.4', '-1')] })),
    ]);
    expect(usage).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining("Unknown option '--bogus'") });
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(
        /\.json: refused, nothing was written:\n {2}prices\[0\]\.amount: "-1" is not a decimal amount/,
      ),
    });
  });
});
