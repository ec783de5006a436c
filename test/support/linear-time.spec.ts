import { expectConstantTime, expectLinearTime, repeated } from './linear-time';

// The checks every parser's property tests rely on: each must pass a parser of its kind and fail
// one that grows faster, or a passing parser would prove nothing.

/**
 * Whether `check` (expectLinearTime by default) fails `work` in one of three tries. A quadratic
 * parser measured on a busy machine can look linear once (in a slow hour of `npm test`, its 2 KB
 * batches were slowed more than its 16 KB ones); a checker that never catches it fails every try.
 */
function failedInThreeTries(
  work: (text: string) => unknown,
  inputOfLength: (n: number) => string,
  check = expectLinearTime,
): string {
  for (let attempt = 1; ; attempt++) {
    try {
      check(work, inputOfLength);
    } catch (error) {
      return (error as Error).message;
    }
    if (attempt === 3) return 'passed three times';
  }
}

/** A linear scan: how many dots. */
const count = (text: string): number => {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 46) n++;
  return n;
};

describe('expectLinearTime', () => {
  it('passes a linear scan', () => {
    expect(expectLinearTime(count, (n) => repeated('a.', n)).ratio).toBeLessThan(20);
  });

  it('fails a pattern that backtracks quadratically (a scheme before "://", tried at every position)', () => {
    const backtracking = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@]+@/gi;
    expect(
      failedInThreeTries(
        (text) => text.replace(backtracking, ''),
        (n) => repeated('a.', n),
      ),
    ).toMatch(/^not linear: /);
  });

  it('fails a parser that re-reads what is left at every fourth element', () => {
    // Character by character: String.prototype.indexOf scans with SIMD, so fast that a re-read
    // by it costs less than the call around it at these lengths, and would measure as linear.
    // Every fourth element, not every one: as quadratic, at a fraction of the time a call on 16 KB takes.
    const quadratic = (text: string): number => {
      let total = 0;
      for (let i = 0; i < text.length; i += 8) {
        for (let j = i; j < text.length; j++) if (text.charCodeAt(j) === 33) total++;
      }
      return total;
    };
    expect(failedInThreeTries(quadratic, (n) => repeated('a,', n))).toMatch(/^not linear: /);
  });
});

describe('expectConstantTime', () => {
  it('passes a parser that reads at most the first 128 characters', () => {
    expect(
      expectConstantTime(
        (text) => count(text.slice(0, 128)),
        (n) => repeated('a.', n),
      ).ratio,
    ).toBeLessThan(3);
  });

  it('fails a linear scan', () => {
    expect(failedInThreeTries(count, (n) => repeated('a.', n), expectConstantTime)).toMatch(/^not constant: /);
  });

  it('fails a pattern that checks the length after reading the whole input', () => {
    const token = /^[A-Za-z0-9._-]+$/;
    const checkedLate = (text: string) => token.test(text) && text.length <= 128;
    expect(failedInThreeTries(checkedLate, (n) => repeated('a', n), expectConstantTime)).toMatch(/^not constant: /);
  });
});
