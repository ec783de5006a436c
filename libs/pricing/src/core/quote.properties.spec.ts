import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { parseQuantity, PLAIN_DECIMAL, plainQuantity, type Quantity } from './quote';

// Amounts come from price books; quantities from callers of PricingService.quote and usage pricing.

const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
/** `0` or digits without a leading zero, then maybe a point and digits: what PLAIN_DECIMAL describes. */
const plainDecimal = fc
  .tuple(
    fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.constantFrom(...'123456789'), digits(0, 70)).map(([first, rest]) => first + rest),
    ),
    fc.option(digits(1, 70), { nil: undefined }),
  )
  .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`));

/** The value a plain decimal denotes, written without trailing zeros in its fraction. */
function canonical(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** The same check, one character at a time: digits, no leading zero, at most one point between digits. */
function isPlainDecimal(text: string): boolean {
  const point = text.indexOf('.');
  const whole = point < 0 ? text : text.slice(0, point);
  const fraction = point < 0 ? undefined : text.slice(point + 1);
  const allDigits = (part: string) => part.length > 0 && [...part].every((c) => c >= '0' && c <= '9');
  return allDigits(whole) && (whole === '0' || whole[0] !== '0') && (fraction === undefined || allDigits(fraction));
}

describe('PLAIN_DECIMAL, plainQuantity and parseQuantity on any text', () => {
  const anyText = fc.oneof(
    outsideText(['0', '1', '9', '.', '1.', '0.', '-', '+', 'e', 'E', ' ', '٣', '１']),
    plainDecimal,
  );

  it('never throw, and accept exactly the plain decimals of at most 60 digits', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(PLAIN_DECIMAL.test(text)).toBe(isPlainDecimal(text));
        const accepted = isPlainDecimal(text) && text.replace('.', '').length <= 60;
        expect(plainQuantity(text)).toBe(accepted ? text : undefined);
        expect(parseQuantity(text)?.toFixed()).toBe(accepted ? canonical(text) : undefined);
      }),
    );
  });

  it('accept a generated amount, exactly (up to 60 digits)', () => {
    fc.assert(
      fc.property(plainDecimal, (text) => {
        expect(PLAIN_DECIMAL.test(text)).toBe(true);
        fc.pre(text.replace('.', '').length <= 60);
        expect(parseQuantity(text)?.toFixed()).toBe(canonical(text));
      }),
    );
  });

  it('refuse an amount with a sign, an exponent, a leading zero or spaces', () => {
    const spoiled = fc
      .tuple(plainDecimal, fc.constantFrom('+', '-'), fc.constantFrom('e', 'E'), fc.integer({ min: -99, max: 99 }))
      .chain(([text, sign, e, exponent]) =>
        fc.constantFrom(
          `${sign}${text}`,
          `${text}${e}${exponent}`,
          `${text}${e}${sign}${Math.abs(exponent)}`,
          `0${text}`,
          ` ${text}`,
          `${text} `,
          `${text}.`,
          `.${text}`,
        ),
      );
    fc.assert(
      fc.property(spoiled, (text) => {
        expect(PLAIN_DECIMAL.test(text)).toBe(false);
        expect(plainQuantity(text)).toBeUndefined();
        expect(parseQuantity(text)).toBeUndefined();
      }),
    );
  });

  it('take a bigint below 10^60 as its decimal text, and refuse any other', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 70n), max: 10n ** 70n }), (n) => {
        const accepted = n >= 0n && n < 10n ** 60n;
        expect(plainQuantity(n)).toBe(accepted ? n.toString() : undefined);
      }),
    );
  });

  it('refuse whatever an untyped caller passes that is neither a string nor a bigint', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.constant(null), fc.object()), (value) => {
        expect(plainQuantity(value as unknown as Quantity)).toBeUndefined();
      }),
    );
  });
});

describe('PLAIN_DECIMAL, plainQuantity and parseQuantity: linear time on 16 KB', () => {
  const all = (text: string) => [PLAIN_DECIMAL.test(text), plainQuantity(text), parseQuantity(text)];
  it.each<[string, (n: number) => string]>([
    ['a digit run that ends in a letter', (n) => `${repeated('1', n)}x`],
    ['a digit run that ends in a point', (n) => `${repeated('1', n)}.`],
    ['a fraction that ends in a second point', (n) => `1.${repeated('1', n)}.`],
    ['zeros', (n) => repeated('0', n)],
    ['points between digits', (n) => repeated('1.', n)],
    ['a sign before digits', (n) => `-${repeated('9', n)}`],
    ['an exponent after digits', (n) => `${repeated('1', n)}e5`],
    ['a plain decimal of too many digits', (n) => `1${repeated('0', n - 3)}.5`],
  ])('%s', (_what, inputOfLength) => {
    expectLinearTime(all, inputOfLength);
  });

  it('a bigint of as many digits', () => {
    const bigints = new Map<string, bigint>();
    const ofText = (text: string): bigint => bigints.get(text) ?? bigints.set(text, BigInt(text)).get(text)!;
    expectLinearTime(
      (text) => plainQuantity(ofText(text)),
      (n) => `1${repeated('7', n - 1)}`,
    );
  });
});
