import fc from 'fast-check';
import { repeated } from './linear-time';

/** Long enough to pass 16 KB, the length the linear-time checks measure. */
const LONG = 20_000;

/**
 * Any code point but a surrogate: the values of fast-check's `unit: 'binary'`, with the same bias
 * to small ones (a `nat` over the code points, surrogates skipped), and an unmapper that reads the
 * one value. fast-check's own builds a map of all 1,112,064 code points to look for its "dangerous
 * strings" in them, once per module registry: a cost every test file would pay.
 */
export const anyCodePoint: fc.Arbitrary<string> = fc.nat({ max: 0x10ffff - 0x800 }).map(
  (index) => String.fromCodePoint(index < 0xd800 ? index : index + 0x800),
  (value) => {
    const code = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (code === undefined || String.fromCodePoint(code) !== value || (code >= 0xd800 && code < 0xe000)) {
      throw new Error('not one code point outside the surrogates');
    }
    return code < 0xd800 ? code : code - 0x800;
  },
);

/** Any UTF-16 code unit: lone surrogates too, which anyCodePoint never gives. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));

/**
 * Text from outside as a parser of it may meet it: any code points (controls included), any
 * UTF-16 (lone surrogates), short or long (up to about 20,000 characters), and long runs of one
 * of `units` (a parser's separators, quotes and prefixes) or of a random unit, with arbitrary
 * text before and after.
 */
export function outsideText(units: readonly string[] = []): fc.Arbitrary<string> {
  const unit = fc.oneof(
    ...(units.length > 0 ? [fc.constantFrom(...units)] : []),
    fc.string({ unit: anyCodePoint, minLength: 1, maxLength: 8 }),
  );
  const edge = fc.string({ unit: anyCodePoint, maxLength: 12 });
  const run = fc
    .tuple(edge, unit, fc.integer({ min: 0, max: LONG }), edge)
    .map(([head, part, length, tail]) => head + repeated(part, length) + tail);
  return fc.oneof(
    fc.string({ unit: anyCodePoint }),
    fc.string({ unit: codeUnit }),
    fc.string({ unit: 'binary-ascii', maxLength: 64 }),
    fc.string({ unit: anyCodePoint, minLength: 1_000, maxLength: LONG, size: 'medium' }),
    run,
  );
}
