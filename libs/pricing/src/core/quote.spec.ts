import { COST_DECIMAL_PLACES, costOf, parseQuantity } from './quote';

function quantity(text: string | bigint) {
  const parsed = parseQuantity(text);
  if (!parsed) throw new Error(`expected ${String(text)} to parse`);
  return parsed;
}

describe('parseQuantity', () => {
  it.each<[string | bigint, string]>([
    ['0', '0'],
    ['730', '730'],
    ['0.5', '0.5'],
    ['0.000000001', '0.000000001'],
    ['123456789012345678901234567890.123456789', '123456789012345678901234567890.123456789'],
    [730n, '730'],
    [0n, '0'],
    [10n ** 59n, '1' + '0'.repeat(59)],
  ])('reads %p exactly, as a plain decimal', (input, expected) => {
    expect(quantity(input).toFixed()).toBe(expected);
  });

  it('accepts up to 60 digits, the dot not counted', () => {
    expect(quantity('9'.repeat(60)).toFixed()).toBe('9'.repeat(60));
    expect(quantity(`${'9'.repeat(30)}.${'9'.repeat(30)}`).toFixed()).toBe(`${'9'.repeat(30)}.${'9'.repeat(30)}`);
    expect(parseQuantity('9'.repeat(61))).toBeUndefined();
    expect(parseQuantity(`${'9'.repeat(30)}.${'9'.repeat(31)}`)).toBeUndefined();
    expect(parseQuantity(10n ** 60n)).toBeUndefined();
  });

  it.each<string | bigint>([
    '-1',
    -5n,
    '1e3',
    '1E3',
    '',
    ' ',
    '+1',
    '01',
    '1.',
    '.5',
    '1,5',
    '1_000',
    'NaN',
    'Infinity',
    '0x10',
    '١',
  ])('refuses %p', (input) => {
    expect(parseQuantity(input)).toBeUndefined();
  });
});

describe('costOf', () => {
  it('is amount × quantity / unit_count, trailing zeros removed', () => {
    expect(costOf({ amount: '0.0480', unitCount: 730 }, quantity('730'))).toBe('0.048');
    expect(costOf({ amount: '0.0610', unitCount: 3600 }, quantity('3600'))).toBe('0.061');
    expect(costOf({ amount: '12', unitCount: 1 }, quantity('2'))).toBe('24');
    expect(costOf({ amount: '0.0480', unitCount: 730 }, quantity('0'))).toBe('0');
  });

  it('does no float arithmetic', () => {
    expect(costOf({ amount: '0.1', unitCount: 1 }, quantity('3'))).toBe('0.3');
    expect(costOf({ amount: '0.1', unitCount: 1 }, quantity('0.2'))).toBe('0.02');
    expect(costOf({ amount: '0.3', unitCount: 3 }, quantity('1'))).toBe('0.1');
    expect(costOf({ amount: '9007199254740993', unitCount: 1 }, quantity('1'))).toBe('9007199254740993'); // 2^53 + 1
  });

  it(`rounds once, half-even, to ${COST_DECIMAL_PLACES} decimal places`, () => {
    expect(COST_DECIMAL_PLACES).toBe(20);
    expect(costOf({ amount: '1', unitCount: 3 }, quantity('1'))).toBe('0.33333333333333333333');
    expect(costOf({ amount: '2', unitCount: 3 }, quantity('1'))).toBe('0.66666666666666666667');
    expect(costOf({ amount: '1', unitCount: 3 }, quantity('3'))).toBe('1');
    // A tie at the 21st place goes to the even digit.
    for (const [amount, rounded] of [
      ['0.000000000000000000025', '0.00000000000000000002'],
      ['0.000000000000000000035', '0.00000000000000000004'],
      ['0.000000000000000000005', '0'],
      ['0.000000000000000000015', '0.00000000000000000002'],
    ]) {
      expect(costOf({ amount, unitCount: 1 }, quantity('1'))).toBe(rounded);
    }
  });

  it('never answers in exponent form', () => {
    expect(costOf({ amount: '0.000000012', unitCount: 1 }, quantity('1'))).toBe('0.000000012');
    expect(costOf({ amount: '0.00000000000000000001', unitCount: 1 }, quantity('1'))).toBe('0.00000000000000000001');
    expect(costOf({ amount: '1' + '0'.repeat(39), unitCount: 1 }, quantity('1' + '0'.repeat(59)))).toBe(
      '1' + '0'.repeat(98),
    );
  });

  it('is exact at the limits of its inputs', () => {
    expect(
      costOf(
        { amount: '123456789012345678901234567890.12345678', unitCount: 2147483647 },
        quantity('987654321098765432109876543210.987654321098765432109876543210'),
      ),
    ).toBe('56779306006525224648746781694988520015310004937402.46047324428464891331');
  });

  it.each(['1e3', '-1', '', '.5', '0x10', 'NaN'])('refuses an amount that is not a decimal: %p', (amount) => {
    expect(() => costOf({ amount, unitCount: 1 }, quantity('1'))).toThrow(`not a decimal amount: ${amount}`);
  });
});
