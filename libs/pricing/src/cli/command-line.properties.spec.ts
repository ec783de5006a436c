import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { COMMAND_NAMES, OPTIONS } from './commands';
import { PriceBookUsageError, readCommandLine } from './command-line';
import { closest, editDistance } from './suggest';

// The command line is whatever an operator (or a script) types: readCommandLine reads any of it,
// and answers a usage error or a command, never anything else, in time linear in its length.

const WORDS = [
  ...COMMAND_NAMES,
  ...Object.keys(OPTIONS).map((name) => `--${name}`),
  '-q',
  '-h',
  '-',
  '--',
  '--json=x',
  '--dry-run=',
  '2026-01-01T00:00:00Z',
];
const argument = fc.oneof(fc.constantFrom(...WORDS), outsideText(['-', '=', '--']), fc.string());

function read(argv: readonly string[]): unknown {
  try {
    return readCommandLine(argv);
  } catch (error) {
    if (error instanceof PriceBookUsageError) return error;
    throw error;
  }
}

describe('readCommandLine on any command line', () => {
  it('gives a command, help or the version, or a usage error with its hint, and never throws anything else', () => {
    fc.assert(
      fc.property(fc.array(argument, { maxLength: 12 }), (argv) => {
        const result = read(argv);
        if (result instanceof PriceBookUsageError) {
          expect(result.message.length).toBeLessThan(2_000); // values are quoted within bounds
          expect(result.hint).toMatch(/^Run 'npm run -s pricing -- /);
        } else {
          expect(result).toHaveProperty('command');
        }
      }),
      { numRuns: 500 },
    );
  });

  it('reads a command line in time linear in its length: many arguments, or one long one', () => {
    expectLinearTime(
      (argv: readonly string[]) => read(argv),
      (n) => ['changes', ...Array.from({ length: n / 8 }, () => '--json')],
    );
    expectLinearTime(
      (argv: readonly string[]) => read(argv),
      (n) => ['import', `--${repeated('dry-ru', n / 6)}`],
    );
    expectLinearTime(
      (argv: readonly string[]) => read(argv),
      (n) => [repeated('imprt', n / 5)],
    );
  });
});

describe('closest: "did you mean"', () => {
  it('finds a command or an option one or two edits away, a swap of neighbours counting one', () => {
    expect(closest('imprt', COMMAND_NAMES)).toBe('import');
    expect(closest('hsitory', COMMAND_NAMES)).toBe('history');
    expect(closest('--dryrun', ['--dry-run', '--json'])).toBe('--dry-run');
    expect(closest('--dry', ['--dry-run', '--detailed-exitcode'])).toBe('--dry-run'); // a prefix of one
    expect(closest('frobnicate', COMMAND_NAMES)).toBeUndefined();
    expect(closest('x', COMMAND_NAMES)).toBeUndefined();
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('never throws, never suggests what is far, and costs nothing more for a long word', () => {
    fc.assert(
      fc.property(fc.oneof(outsideText(), fc.constantFrom('imp', 'verif', 'ch', 'withdrw')), (word) => {
        const near = closest(word, COMMAND_NAMES);
        if (near !== undefined) expect(near.startsWith(word) || editDistance(word, near) <= 2).toBe(true);
      }),
    );
    // A word far longer than every candidate is not compared at all.
    expectLinearTime(
      (word: string) => closest(word, COMMAND_NAMES),
      (n) => repeated('z', n),
    );
  });
});
