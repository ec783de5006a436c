import fc from 'fast-check';
import { priceRecord } from '../core/price-record.fixture';
import { describeImportPlan, type ImportChange } from './describe-import';
import { planImport } from './plan-import';
import { parsePriceBook } from './price-book';
import {
  AT_APPLY,
  changeAsRun,
  describePlanValue,
  parsePlanChange,
  planChangeJson,
  planChangeOf,
  planDifference,
  type PlanChange,
} from './reviewed-plan';

const NOW = Date.parse('2026-06-01T12:00:00.250Z');
const LATER = Date.parse('2026-06-02T09:30:00.125Z');
const seconds = { unit_type: 'seconds', unit_count: 3600 };
const stored = priceRecord({ id: 7, productKey: 'compute.g2.4', unitType: 'seconds', unitCount: 3600 });

/** The changes a book makes at `now`, over one stored price of compute.g2.4, as a plan gives them. */
function changesAt(now: number, prices: object[]): PlanChange[] {
  const parsed = parsePriceBook({ prices });
  if ('errors' in parsed) throw new Error(parsed.errors.join('\n'));
  const planned = planImport(parsed.book, [stored], new Map(), now);
  if ('errors' in planned) throw new Error(planned.errors.join('\n'));
  return describeImportPlan(planned.plan).map(planChangeOf);
}

const BOOK = [
  { product_key: 'compute.g2.4', ...seconds, amount: '0.0500' },
  { product_key: 'compute.g2.8', ...seconds, amount: '1', valid_from: '2025-01-01T00:00:00Z' },
  { product_key: 'compute.g2.8', ...seconds, amount: '2' },
  {
    product_key: 'compute.g2.16',
    organization_id: 'org_1',
    ...seconds,
    amount: '3',
    valid_from: '2027-01-01T00:00:00Z',
  },
];

describe('a plan names the instants that are the apply’s own', () => {
  it('writes them "at apply", and every other instant as import --json does', () => {
    const json = changesAt(NOW, BOOK).map(planChangeJson);
    expect(json).toEqual([
      { change: 'end', ...terms('compute.g2.4', '0.0480', '2026-01-01T00:00:00Z', AT_APPLY) },
      {
        change: 'change',
        ...terms('compute.g2.4', '0.0500', AT_APPLY, null),
        ends: terms('compute.g2.4', '0.0480', '2026-01-01T00:00:00Z', null),
      },
      { change: 'new', ...terms('compute.g2.8', '1', '2025-01-01T00:00:00Z', AT_APPLY) },
      { change: 'new', ...terms('compute.g2.8', '2', AT_APPLY, null) },
      { change: 'new', ...terms('compute.g2.16', '3', '2027-01-01T00:00:00Z', null), organization_id: 'org_1' },
    ]);
    // The same fields in the same order as --json: only the apply's own instants differ.
    const parsed = parsePriceBook({ prices: BOOK });
    if ('errors' in parsed) throw new Error('unreachable');
    const planned = planImport(parsed.book, [stored], new Map(), NOW);
    if ('errors' in planned) throw new Error('unreachable');
    const imported = describeImportPlan(planned.plan).map((change) => planChangeJson(changeAsRun(change)));
    expect(json.map((change) => Object.keys(change))).toEqual(imported.map((change) => Object.keys(change)));
    expect(JSON.stringify(imported)).not.toContain(AT_APPLY);
    expect(JSON.stringify(json[4])).toBe(JSON.stringify(imported[4]));
  });

  it('gives the same plan whenever the book is planned: only "at apply" stands for the instant', () => {
    expect(planDifference(changesAt(NOW, BOOK), changesAt(LATER, BOOK))).toBeUndefined();
  });

  it('reads back what it writes', () => {
    const changes = changesAt(NOW, BOOK);
    expect(changes.map((change) => parsePlanChange(planChangeJson(change)))).toEqual(
      changes.map((change) => ({ change })),
    );
    const availability: ImportChange = { kind: 'availability', productKey: 'storage.st1', onSale: false };
    expect(parsePlanChange(planChangeJson(planChangeOf(availability)))).toEqual({
      change: { kind: 'availability', productKey: 'storage.st1', onSale: false },
    });
  });
});

describe('comparing a plan with what the book makes now', () => {
  const now = changesAt(LATER, BOOK);
  const planned = (edit: (json: Record<string, unknown>[]) => void): PlanChange[] => {
    const json = changesAt(NOW, BOOK).map(planChangeJson);
    edit(json);
    return json.map((change) => {
      const parsed = parsePlanChange(change);
      if ('problem' in parsed) throw new Error(parsed.problem);
      return parsed.change;
    });
  };

  it('refuses an explicit instant where the book gives the apply’s: the dry run’s, or a forged one', () => {
    for (const instant of ['2026-06-01T12:00:00.250Z', '2027-01-01T00:00:00Z']) {
      const forged = planned((json) => (json[3].valid_from = instant));
      expect(planDifference(forged, now)).toEqual({ index: 3, field: 'valid_from', planned: instant, now: AT_APPLY });
    }
    // The end an entry without valid_from sets, and that of the price it ends.
    expect(
      planDifference(
        planned((json) => (json[0].valid_until = '2026-06-01T12:00:00.250Z')),
        now,
      ),
    ).toMatchObject({
      index: 0,
      field: 'valid_until',
    });
    expect(
      planDifference(
        planned((json) => (json[2].valid_until = '2026-06-01T12:00:00.250Z')),
        now,
      ),
    ).toMatchObject({
      index: 2,
      field: 'valid_until',
    });
  });

  it('refuses "at apply" where the book gives an instant, and an instant moved by a millisecond', () => {
    expect(
      planDifference(
        planned((json) => (json[4].valid_from = AT_APPLY)),
        now,
      ),
    ).toEqual({
      index: 4,
      field: 'valid_from',
      planned: AT_APPLY,
      now: '2027-01-01T00:00:00Z',
    });
    const ends = planned((json) => ((json[1].ends as Record<string, unknown>).valid_from = '2026-01-01T00:00:00.001Z'));
    expect(planDifference(ends, now)).toMatchObject({ index: 1, field: 'ends.valid_from' });
    expect(
      planDifference(
        planned((json) => (json[1].ends = { ...(json[1].ends as object), valid_until: AT_APPLY })),
        now,
      ),
    ).toMatchObject({ index: 1, field: 'ends.valid_until', planned: AT_APPLY, now: null });
  });

  it('takes an instant as the same instant in another offset', () => {
    expect(
      planDifference(
        planned((json) => (json[4].valid_from = '2027-01-01T01:00:00+01:00')),
        now,
      ),
    ).toBeUndefined();
  });

  it('refuses any other field, a change missing, or one more', () => {
    expect(
      planDifference(
        planned((json) => (json[4].amount = '3.0')),
        now,
      ),
    ).toMatchObject({ index: 4, field: 'amount' });
    expect(
      planDifference(
        planned((json) => json.pop()),
        now,
      ),
    ).toEqual({ index: 4 });
    expect(
      planDifference(
        planned((json) => json.push(json[4])),
        now,
      ),
    ).toEqual({ index: 5 });
    expect(
      planDifference(
        planned((json) => json.reverse()),
        now,
      ),
    ).toMatchObject({ index: 0, field: 'change' });
  });

  it('says what "at apply" means in a refusal', () => {
    expect(describePlanValue(AT_APPLY)).toBe('"at apply" (the apply\'s instant: the book\'s entry has no valid_from)');
    expect(describePlanValue('x'.repeat(1_000))).toMatch(/^"x{80}…" \(1000 characters\)$/);
    expect(describePlanValue(null)).toBe('null');
  });
});

describe('reading a change of a plan file', () => {
  const good = planChangeJson(changesAt(NOW, BOOK)[1]);

  it.each<[string, Record<string, unknown>, string]>([
    ['another kind', { ...good, change: 'ended' }, '.change: "ended" is not "new", "change", "end" or "availability"'],
    ['an unknown field', { ...good, starts: 'at apply' }, ' has the field "starts", which a change "change" has not'],
    ['a field missing', { ...good, amount: undefined }, '.amount is missing'],
    ['a number for an amount', { ...good, amount: 0.05 }, '.amount: 0.05 is not a string'],
    ['a fraction of a unit', { ...good, unit_count: 1.5 }, '.unit_count: 1.5 is not an integer'],
    [
      'an instant without an offset',
      { ...good, valid_from: '2027-01-01T00:00:00' },
      '.valid_from: "2027-01-01T00:00:00" is not an RFC 3339 timestamp with an offset, nor "at apply"',
    ],
    ['"at apply" in another case', { ...good, valid_from: 'At Apply' }, '.valid_from: "At Apply" is not an RFC 3339'],
    ['a null start', { ...good, valid_from: null }, '.valid_from: null is not an RFC 3339'],
    ['ends that is not an object', { ...good, ends: [] }, '.ends is not an object'],
    [
      'ends with a field of a change',
      { ...good, ends: { ...(good.ends as object), change: 'new' } },
      '.ends has the field "change"',
    ],
  ])('refuses %s, naming the field', (_what, json, problem) => {
    const parsed = parsePlanChange(JSON.parse(JSON.stringify(json)));
    expect('problem' in parsed && parsed.problem).toEqual(expect.stringContaining(problem));
  });

  it('refuses a field "__proto__" as any other unknown one (JSON.parse makes it a field)', () => {
    const parsed = parsePlanChange(JSON.parse(`{"__proto__": {}, ${JSON.stringify(good).slice(1)}`));
    expect(parsed).toEqual({ problem: ' has the field "__proto__", which a change "change" has not' });
  });

  it('reads any JSON to a change or one bounded line, and a change with any field replaced too', () => {
    const field = fc.constantFrom(...Object.keys(good), 'ends.valid_from', 'ends.amount');
    const value = fc.oneof(fc.jsonValue(), fc.constant(AT_APPLY), fc.string({ minLength: 1_000, maxLength: 5_000 }));
    fc.assert(
      fc.property(fc.jsonValue(), field, value, (json, key, replaced) => {
        const edited = JSON.parse(JSON.stringify(good)) as Record<string, unknown>;
        const [outer, inner] = key.split('.');
        if (inner) (edited[outer] as Record<string, unknown>)[inner] = replaced;
        else edited[outer] = replaced;
        for (const input of [json, JSON.parse(JSON.stringify(edited))]) {
          const parsed = parsePlanChange(input);
          if ('problem' in parsed) {
            expect(parsed.problem).not.toContain('\n');
            expect(parsed.problem.length).toBeLessThan(300);
          } else {
            expect(parsePlanChange(planChangeJson(parsed.change))).toEqual(parsed);
          }
        }
      }),
    );
  });
});

function terms(
  productKey: string,
  amount: string,
  validFrom: string,
  validUntil: string | null,
): Record<string, unknown> {
  return {
    product_key: productKey,
    organization_id: null,
    unit_type: 'seconds',
    unit_count: 3600,
    amount,
    valid_from: validFrom,
    valid_until: validUntil,
  };
}
