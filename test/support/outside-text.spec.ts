import fc from 'fast-check';
import { anyCodePoint } from './outside-text';

describe('anyCodePoint', () => {
  it('gives one code point outside the surrogates, small and astral ones', () => {
    const values = fc.sample(anyCodePoint, { numRuns: 20_000, seed: 1 });
    const codes = values.map((value) => value.codePointAt(0) ?? -1);
    expect(values.every((value, i) => String.fromCodePoint(codes[i]) === value)).toBe(true);
    expect(codes.filter((code) => code >= 0xd800 && code < 0xe000)).toEqual([]);
    expect(codes.some((code) => code < 0x80)).toBe(true);
    expect(codes.some((code) => code >= 0xe000 && code <= 0xffff)).toBe(true);
    expect(codes.some((code) => code > 0xffff)).toBe(true);
  });

  it('unmaps what it gives, and nothing else, so that fast-check can shrink strings of it', () => {
    const strings = fc.string({ unit: anyCodePoint });
    fc.assert(fc.property(strings, (text) => strings.canShrinkWithoutContext(text)));
    for (const code of [0, 0xd7ff, 0xe000, 0xffff, 0x10000, 0x10ffff]) {
      expect(anyCodePoint.canShrinkWithoutContext(String.fromCodePoint(code))).toBe(true);
    }
    for (const other of ['', 'ab', '\ud800', '\udfff', 7, undefined]) {
      expect(anyCodePoint.canShrinkWithoutContext(other)).toBe(false);
    }
  });
});
