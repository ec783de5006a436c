import fc from 'fast-check';
import { PricingError, PricingErrorCode } from '../errors/pricing-error';
import { thrownAs } from '../errors/thrown.fixture';
import { Exact, PLAIN_DECIMAL } from './quote';
import { roundForInvoice, sumCosts } from './usage';

// roundForInvoice: the one rounding to cents (docs/decisions.md, "Rounding an invoice").

/** `digits × 10^-scale` as plain decimal text, trailing zeros kept: `150n, 2` is `1.50`. */
function decimalText(digits: bigint, scale: number): string {
  if (scale === 0) return digits.toString();
  const text = digits.toString().padStart(scale + 1, '0');
  return `${text.slice(0, -scale)}.${text.slice(-scale)}`;
}
/** A cost as the library writes one, or longer: up to 55 digits, up to 25 of them after the point. */
const cost = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 55n }), fc.nat({ max: 25 }))
  .map(([digits, scale]) => decimalText(digits, scale));
/** Costs on a half cent, where the rule shows: `x.xx5`, with or without zeros after it. */
const halfCent = fc
  .tuple(fc.nat({ max: 100_000 }), fc.nat({ max: 99 }), fc.nat({ max: 5 }))
  .map(([whole, cents, zeros]) => `${whole}.${String(cents).padStart(2, '0')}5${'0'.repeat(zeros)}`);
const anyCost = fc.oneof(cost, halfCent);

const TWO_DECIMALS = /^(?:0|[1-9]\d*)\.\d{2}$/;
const HALF_CENT = new Exact('0.005');

describe('roundForInvoice on any cost', () => {
  it('gives a plain decimal string with exactly two decimals, never a float', () => {
    fc.assert(
      fc.property(anyCost, (amount) => {
        const rounded = roundForInvoice(amount);
        expect(typeof rounded).toBe('string');
        expect(rounded).toMatch(TWO_DECIMALS);
      }),
    );
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(anyCost, (amount) => {
        const rounded = roundForInvoice(amount);
        expect(roundForInvoice(rounded)).toBe(rounded);
      }),
    );
  });

  it('is within half a cent of the exact amount, and a half cent goes up', () => {
    fc.assert(
      fc.property(anyCost, (amount) => {
        const exact = new Exact(amount);
        const difference = new Exact(roundForInvoice(amount)).minus(exact);
        expect(difference.abs().lte(HALF_CENT)).toBe(true);
        if (difference.abs().eq(HALF_CENT)) expect(difference.isPositive()).toBe(true);
      }),
    );
  });

  it("agrees with decimal.js's ROUND_HALF_UP to two places", () => {
    fc.assert(
      fc.property(anyCost, (amount) => {
        expect(roundForInvoice(amount)).toBe(new Exact(amount).toDecimalPlaces(2, Exact.ROUND_HALF_UP).toFixed(2));
      }),
    );
  });

  it('adds up: the sum of rounded lines is within half a cent per line of the exact sum', () => {
    fc.assert(
      fc.property(fc.array(anyCost, { minLength: 1, maxLength: 20 }), (lines) => {
        const exact = lines.reduce((sum, line) => sum.plus(line), new Exact(0));
        const invoiced = lines.reduce((sum, line) => sum.plus(roundForInvoice(line)), new Exact(0));
        expect(invoiced.minus(exact).abs().lte(HALF_CENT.times(lines.length))).toBe(true);
      }),
    );
  });

  it('refuses anything but a plain non-negative decimal string with INVALID_COST, as sumCosts does', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.double(),
          fc.bigInt(),
          fc.constantFrom('-1', '1e3', '.5', '1.', '01', ' 1', '1,5', '+1', 'NaN', 'Infinity', null, undefined),
          fc.constant(Object.create(null) as unknown),
        ),
        (value) => {
          fc.pre(!(typeof value === 'string' && PLAIN_DECIMAL.test(value)));
          for (const refuse of [() => roundForInvoice(value as string), () => sumCosts(['1', value as string])]) {
            const error = thrownAs(PricingError, refuse);
            expect(error.code).toBe(PricingErrorCode.InvalidCost);
            expect(error.message).toMatch(/^not a plain non-negative decimal cost: /);
            expect(error.message.length).toBeLessThan(200); // the value is quoted cut (bounded-text.ts)
          }
        },
      ),
    );
  });
});
