import type { CliResult } from '../support/cli';
import { dumpDatabase } from '../support/database';
import { inParallel, price, useCliDatabase } from '../support/price-book-cli';

// The command line as the ecosystem's CLIs have it (Terraform, kubectl, git): usage errors exit 64
// with a short message that points at --help (and the closest command or option, when one is
// close), and write nothing; `help` and `<command> --help` per command; --version.

describe('usage errors exit 64, say what is wrong and where to read the usage', () => {
  const usageErrors: [string, string[], string][] = [
    ['no command', [], 'a command is needed'],
    ['an unknown command', ['frobnicate'], 'unknown command "frobnicate"'],
    ['a mistyped command', ['imprt', 'book.json'], 'unknown command "imprt"; did you mean import?'],
    ['a mistyped command, two letters swapped', ['hsitory'], 'did you mean history?'],
    ['import without a file', ['import'], 'import takes one file (- for standard input)'],
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
    ['an unknown option', ['export', '--bogus'], 'unknown option "--bogus" of export'],
    [
      'a mistyped option',
      ['import', 'book.json', '--dryrun'],
      'unknown option "--dryrun" of import; did you mean --dry-run?',
    ],
    ['a mistyped option of changes', ['changes', '--sinse', '2026-01-01T00:00:00Z'], 'did you mean --since?'],
    [
      'an option of another command',
      ['export', '--dry-run'],
      '--dry-run is not an option of export (it is one of import)',
    ],
    ['an option given twice', ['changes', '--limit', '1', '--limit', '2'], '--limit is given twice'],
    ['an option without its value', ['changes', '--since'], '--since needs a value (<timestamp>)'],
    ['an option followed by another', ['import', 'b.json', '--plan-out', '--dry-run'], '--plan-out needs a value'],
    ['a flag with a value', ['import', 'b.json', '--dry-run=yes'], '--dry-run takes no value'],
    [
      '--detailed-exitcode without --dry-run',
      ['import', 'b.json', '--detailed-exitcode'],
      'an option of import --dry-run',
    ],
    [
      '--lock-timeout that is no number of seconds',
      ['withdraw', 'compute.g2.4', '--valid-from', '2030-01-01T00:00:00Z', '--lock-timeout', '1m'],
      '--lock-timeout "1m": a whole number of seconds',
    ],
    ['--limit of 0', ['changes', '--limit', '0'], '--limit "0": a whole number from 1'],
    ['--product of no family', ['changes', '--product', 'compute'], '--product: "compute" fits no product family'],
    ['history without a key', ['history'], 'history takes one product key'],
    ['history with a malformed key', ['history', 'compute.G2'], '"compute.G2" is not compute.<instance_type>'],
    [
      'history with a malformed organization',
      ['history', 'storage.gp1', '--organization', 'org 42'],
      '--organization "org 42": 1 to 64 letters',
    ],
    ['help of an unknown command', ['help', 'imports'], 'unknown command "imports"; did you mean import?'],
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

  it.each(usageErrors.map((entry, index) => [...entry, index] as const))('%s', (_name, args, message, index) => {
    const result = results[index];
    expect({ code: result.code, stdout: result.stdout, target: result.target }).toEqual({
      code: 64,
      stdout: '',
      target: undefined, // nothing was connected to
    });
    expect(result.stderr).toContain(message);
    // Short: the message and where to read more, never the whole usage.
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    const command = args.find((arg) => ['import', 'changes', 'export', 'show', 'withdraw', 'history'].includes(arg));
    expect(lines[1]).toBe(
      command === undefined
        ? "Run 'npm run -s pricing -- help' for the commands."
        : `Run 'npm run -s pricing -- ${command} --help' for its options and examples.`,
    );
  });

  it('usage errors write nothing', () => {
    expect(dumpAfter).toBe(dumpBefore);
  });

  it('are JSON on stderr with --json, nothing on stdout', async () => {
    const result = await f.cli('changes', '--json', '--limit', 'x');
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 64, stdout: '' });
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'PRICE_BOOK_USAGE',
        exit_code: 64,
        message: expect.stringContaining('--limit "x": a whole number from 1'),
        hint: "Run 'npm run -s pricing -- changes --help' for its options and examples.",
      },
    });
  });
});

describe('help and --version', () => {
  const f = useCliDatabase();

  it('help, --help and -h print the commands, each with what it does, and exit 0', async () => {
    const [help, long, short] = await Promise.all([f.cli('help'), f.cli('--help'), f.cli('-h')]);
    for (const result of [help, long, short]) {
      expect({ code: result.code, stderr: result.stderr, target: result.target }).toEqual({
        code: 0,
        stderr: '',
        target: undefined,
      });
      expect(result.stdout).toBe(help.stdout);
    }
    expect(help.stdout).toMatch(/^usage: npm run -s pricing -- <command> \[<args>\] \[<options>\]\n/);
    for (const command of [
      'import',
      'apply',
      'export',
      'show',
      'history',
      'changes',
      'withdraw',
      'verify',
      'focus',
      'migrate',
    ]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
    }
  });

  it.each(['import', 'changes', 'withdraw', 'show'])(
    '%s --help and help %s print its synopsis, every option, examples and exit codes',
    async (command) => {
      const [option, topic] = await Promise.all([f.cli(command, '--help'), f.cli('help', command)]);
      expect(option).toEqual(topic);
      expect(option.code).toBe(0);
      const text = option.stdout;
      expect(text).toMatch(new RegExp(`^usage: npm run -s pricing -- ${command}`));
      expect(text).toContain('Options:');
      expect(text).toContain('Examples:');
      expect(text).toMatch(/Exit codes:\n( {2,}\d+ {2}.+\n)+/);
      expect(text).toMatch(/^ +64 {2}wrong usage/m);
    },
  );

  it('names the options of each command, and only those', async () => {
    const importHelp = (await f.cli('import', '--help')).stdout;
    for (const option of [
      '--dry-run',
      '--plan-out <plan>',
      '--detailed-exitcode',
      '--json',
      '-q, --quiet',
      '--actor <name>',
      '--reason <text>',
      '--publish-in <seconds>',
      '--lock-timeout <seconds>',
    ]) {
      expect(importHelp).toContain(option);
    }
    expect(importHelp).toMatch(/^ +2 {2}import --dry-run --detailed-exitcode: the book would change/m);
    expect(importHelp).toMatch(/^ +6 {2}another writer held the price book/m);
    const changesHelp = (await f.cli('changes', '--help')).stdout;
    for (const option of [
      '--since <timestamp>',
      '--until <timestamp>',
      '--product <product_key>',
      '--limit <n>',
      '--json',
    ]) {
      expect(changesHelp).toContain(option);
    }
    expect(changesHelp).not.toContain('--dry-run');
    expect(changesHelp).not.toMatch(/^ +6 /m);
  });

  it('--version prints the version and the schema it migrates to, as JSON with --json', async () => {
    const [text, json] = await Promise.all([f.cli('--version'), f.cli('--version', '--json')]);
    expect(text).toEqual({
      code: 0,
      stdout: expect.stringMatching(
        /^pricing-control-plane \d+\.\d+\.\d+ \(schema \w+17640000\d{5}, Node\.js v\d+\.\d+\.\d+\)\n$/,
      ),
      stderr: '',
    });
    expect(JSON.parse(json.stdout)).toEqual({
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      schema: expect.stringMatching(/^\w+17640000\d{5}$/),
      node: process.version,
    });
  });
});

describe('the process', () => {
  const f = useCliDatabase();

  it('exits with the same codes: 64 for wrong usage, 3 for a refused book, 0 and the help for --help', async () => {
    const [usage, refused, help] = await Promise.all([
      f.spawned('export', '--bogus'),
      f.spawned('import', await f.bookFile({ prices: [price('compute.g2.4', '-1')] })),
      f.spawned('--help'),
    ]);
    expect(usage).toEqual({
      code: 64,
      stdout: '',
      stderr: expect.stringContaining('unknown option "--bogus" of export'),
    });
    expect(refused).toEqual({
      code: 3,
      stdout: '',
      stderr: expect.stringMatching(
        /\.json: refused, nothing was written:\n {2}prices\[0\]\.amount: "-1" is not a decimal amount/,
      ),
    });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: npm run -s pricing -- <command>');
  });
});
