import { priceRecord } from './price-record.fixture';
import { recordProblem } from './record-rules';

describe('recordProblem', () => {
  it('takes a price that keeps the book’s rules', () => {
    expect(recordProblem(priceRecord({ validUntil: '2027-01-01T00:00:00Z' }))).toBeUndefined();
    expect(
      recordProblem(priceRecord({ productKey: 'compute.g2.4', unitType: 'seconds', unitCount: 3600 })),
    ).toBeUndefined();
  });

  it.each<[string, Parameters<typeof priceRecord>[0], RegExp]>([
    ['a key of no family', { productKey: 'storage.gp2' }, /fits no family/],
    ['another unit type', { unitType: 'seconds' }, /not gib_hours/],
    ['a negative count', { unitCount: -730 }, /unit count/],
    ['a count that is no integer', { unitCount: 1.5 }, /unit count/],
    ['NaN', { amount: 'NaN' }, /amount/],
    ['a negative amount', { amount: '-1' }, /amount/],
    ['Infinity', { amount: 'Infinity' }, /amount/],
    ['-infinity as valid_from', { validFrom: -Infinity }, /valid_from/],
    ['infinity as valid_until', { validUntil: Infinity }, /valid_until/],
    ['an end before its start', { validUntil: '2025-01-01T00:00:00Z' }, /valid_until/],
    ['NaN as recorded_at', { recordedAt: Number.NaN }, /recorded_at/],
  ])('names %s', (_, fields, problem) => {
    expect(recordProblem(priceRecord(fields))).toMatch(problem);
  });
});
