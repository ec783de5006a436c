import fc from 'fast-check';
import { repeated } from './linear-time';

/** Long enough to pass 16 KB, the length the linear-time checks measure. */
const LONG = 20_000;

/** Any UTF-16 code unit: lone surrogates too, which 'binary' never gives. */
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
    fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
  );
  const edge = fc.string({ unit: 'binary', maxLength: 12 });
  const run = fc
    .tuple(edge, unit, fc.integer({ min: 0, max: LONG }), edge)
    .map(([head, part, length, tail]) => head + repeated(part, length) + tail);
  return fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.string({ unit: codeUnit }),
    fc.string({ unit: 'binary-ascii', maxLength: 64 }),
    fc.string({ unit: 'binary', minLength: 1_000, maxLength: LONG, size: 'medium' }),
    run,
  );
}
