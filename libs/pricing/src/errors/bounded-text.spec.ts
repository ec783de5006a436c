import { cutText, foreignMessage, listProblems, quoteValue } from './bounded-text';
import { PriceBookRefusedError } from './pricing-error';

describe('quoteValue', () => {
  it('quotes a short value whole, as a JSON string', () => {
    expect(quoteValue('compute.G2')).toBe('"compute.G2"');
    expect(quoteValue('')).toBe('""');
    expect(quoteValue('a"b\\c')).toBe('"a\\"b\\\\c"');
  });

  it('quotes the first 80 characters of a longer value, marked as cut, with its length', () => {
    expect(quoteValue('a'.repeat(10_000))).toBe(`"${'a'.repeat(80)}…" (10000 characters)`);
    expect(quoteValue('b'.repeat(81))).toBe(`"${'b'.repeat(80)}…" (81 characters)`);
    expect(quoteValue('c'.repeat(80))).toBe(`"${'c'.repeat(80)}"`);
  });

  it('escapes what a terminal would act on or hide: controls, C1, bidirectional overrides, line separators', () => {
    expect(quoteValue('a\nb\u001b[31m')).toBe('"a\\nb\\u001b[31m"');
    expect(quoteValue('\u009b2J\u202eevil\u2028')).toBe('"\\u009b2J\\u202eevil\\u2028"');
  });

  it('never cuts a surrogate pair in half', () => {
    const quoted = quoteValue(`${'a'.repeat(79)}😀${'a'.repeat(100)}`);
    expect(quoted).toBe(`"${'a'.repeat(79)}…" (181 characters)`);
  });
});

describe('cutText', () => {
  it('keeps short text and cuts long text visibly', () => {
    expect(cutText('--bogus')).toBe('--bogus');
    expect(cutText('x'.repeat(200))).toBe(`${'x'.repeat(80)}… (200 characters)`);
  });
});

describe('listProblems', () => {
  const problems = (n: number) => Array.from({ length: n }, (_, i) => `prices[${i}]: bad`);

  it('lists up to 50 problems, one a line', () => {
    expect(listProblems(problems(2))).toBe('prices[0]: bad\n  prices[1]: bad');
    expect(listProblems(problems(50)).split('\n')).toHaveLength(50);
  });

  it('lists 50 of 500 problems, then how many more', () => {
    const lines = listProblems(problems(500)).split('\n  ');
    expect(lines).toHaveLength(51);
    expect(lines[49]).toBe('prices[49]: bad');
    expect(lines[50]).toBe('and 450 more');
  });
});

describe('foreignMessage', () => {
  it('keeps a short message and bounds a long one to one line', () => {
    expect(foreignMessage('Unexpected end of JSON input')).toBe('Unexpected end of JSON input');
    const bounded = foreignMessage(`Unexpected token '\n', "${'z'.repeat(5000)}" is not valid JSON`);
    expect(bounded).not.toContain('\n');
    expect(bounded.length).toBeLessThan(250);
    expect(bounded).toMatch(/… \(\d+ characters\)$/);
  });
});

describe('PriceBookRefusedError', () => {
  it('lists at most 50 problems in its message and details, then how many more', () => {
    const problems = Array.from({ length: 500 }, (_, i) => `prices[${i}].amount: bad`);
    const error = new PriceBookRefusedError(problems);
    const lines = error.message.split('\n');
    expect(lines).toHaveLength(52);
    expect(lines[0]).toBe('refused, nothing was written:');
    expect(lines[50]).toBe('  prices[49].amount: bad');
    expect(lines[51]).toBe('  and 450 more');
    expect(error.problems).toHaveLength(500);
    expect(error.details).toEqual({ problems: problems.slice(0, 50), omitted_problems: 450 });
  });

  it('keeps a short list as it was', () => {
    const error = new PriceBookRefusedError(['a', 'b']);
    expect(error.message).toBe('refused, nothing was written:\n  a\n  b');
    expect(error.details).toEqual({ problems: ['a', 'b'] });
  });
});
