import fc from 'fast-check';
import { PackedRecordReader, toPriceRecord, type PriceRecordRow } from './price-book-rows';

// The one mapping of a price_record row. A record read without `recorded_at` (a fixture's) has no
// recordedAt at all, not undefined.

const row: PriceRecordRow = {
  id: 7,
  product_key: 'storage.gp1',
  organization_id: 'org_42',
  unit_type: 'gib_hours',
  unit_count: 730,
  amount: '0.0400',
  valid_from: Date.parse('2026-01-01T00:00:00Z'),
  valid_until: null,
  recorded_at: Date.parse('2025-12-01T00:00:00Z'),
  superseded_by: null,
};

describe('toPriceRecord', () => {
  it('maps every column', () => {
    expect(toPriceRecord(row)).toEqual({
      id: 7,
      productKey: 'storage.gp1',
      organizationId: 'org_42',
      unitType: 'gib_hours',
      unitCount: 730,
      amount: '0.0400',
      validFrom: row.valid_from,
      validUntil: null,
      recordedAt: row.recorded_at,
      supersededBy: null,
    });
  });

  it('has recordedAt undefined where the row has none (the slot is in the object all the same: one shape)', () => {
    const record = toPriceRecord({ ...row, recorded_at: null });
    expect(record.recordedAt).toBeUndefined();
    expect(JSON.stringify(record)).not.toContain('recordedAt');
  });

  it('shares the strings it is given through intern', () => {
    const seen: unknown[] = [];
    toPriceRecord(row, (text) => (seen.push(text), text));
    expect(seen).toEqual(['storage.gp1', 'org_42', 'gib_hours', '0.0400']);
  });
});

/** A record's row as columns read it (RECORD_COLUMNS and its end's changes): the reader's model. */
interface HeldRecordRow extends PriceRecordRow {
  readonly end_set_at: number | null;
  readonly end_before: number | null;
  readonly end_changes: number;
}

describe('PackedRecordReader', () => {
  /** An instant as PostgreSQL holds it (microseconds, 4713 BC to 294276 AD). */
  const micros = fc.oneof(
    fc.bigInt({ min: -211_813_488_000_000_000n, max: 9_224_318_016_000_000_000n }),
    fc.bigInt({ min: 0n, max: 4_102_444_800_000_000n }),
    fc.constantFrom(0n, -1n, -500_000n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n),
  );
  /** Or an infinite one (a row written by hand). */
  const instant = fc.oneof(
    { weight: 20, arbitrary: micros },
    { weight: 1, arbitrary: fc.constantFrom(Infinity, -Infinity) },
  );
  /** As extract(epoch) writes it: decimal seconds with six places. */
  const seconds = (at: bigint | number): string => {
    if (typeof at === 'number') return String(at);
    const sign = at < 0n ? '-' : '';
    const abs = at < 0n ? -at : at;
    return `${sign}${abs / 1_000_000n}.${String(abs % 1_000_000n).padStart(6, '0')}`;
  };
  /** What the columns' (extract(epoch) * 1000)::float8 give: the decimal of ms, rounded once. */
  const ms = (at: bigint | number): number => {
    if (typeof at === 'number') return at;
    const sign = at < 0n ? '-' : '';
    const abs = at < 0n ? -at : at;
    return Number(`${sign}${abs / 1_000n}.${String(abs % 1_000n).padStart(3, '0')}`);
  };
  const nullable = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });
  const held = fc.record({
    id: fc.oneof(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.constant(2 ** 60)),
    unit_count: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    end_changes: fc.integer({ min: 0, max: 1_000 }),
    valid_from: micros,
    valid_until: nullable(instant),
    recorded_at: nullable(instant),
    end_set_at: nullable(instant),
    end_before: nullable(instant),
    superseded_by: nullable(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })),
    product_key: fc.constantFrom('storage.gp1', 'compute.g2.4', 'network.vpc_egress'),
    organization_id: nullable(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/)),
    unit_type: fc.constantFrom('gib_hours' as const, 'seconds' as const, 'gb' as const),
    amount: fc.stringMatching(/^\d{1,20}(\.\d{1,20})?$/),
  });
  type Held = typeof held extends fc.Arbitrary<infer T> ? T : never;
  const INSTANTS = ['valid_from', 'valid_until', 'recorded_at', 'end_set_at', 'end_before'] as const;
  const ORDER = [
    'id',
    'unit_count',
    'end_changes',
    ...INSTANTS,
    'superseded_by',
    'product_key',
    'organization_id',
    'unit_type',
    'amount',
  ] as const;
  /** As PostgreSQL writes PACKED_HELD_RECORD. */
  const packed = (row: Held): string =>
    ORDER.map((name) => {
      const field = row[name];
      if (field === null) return '';
      return (INSTANTS as readonly string[]).includes(name) ? seconds(field as bigint | number) : String(field);
    }).join(',');
  /** The row as the columns read it: each instant in epoch ms. */
  const columns = (row: Held): HeldRecordRow => ({
    ...row,
    valid_from: ms(row.valid_from),
    valid_until: row.valid_until === null ? null : ms(row.valid_until),
    recorded_at: row.recorded_at === null ? null : ms(row.recorded_at),
    end_set_at: row.end_set_at === null ? null : ms(row.end_set_at),
    end_before: row.end_before === null ? null : ms(row.end_before),
  });

  it('gives back every field of the row packed, as the columns read it: nulls, instants of any era, infinite ones', () => {
    const reader = new PackedRecordReader();
    fc.assert(
      fc.property(held, (row) => {
        const read = columns(row);
        expect(reader.read(packed(row))).toStrictEqual({
          record: toPriceRecord(read),
          endSetAt: read.end_set_at,
          endBefore: read.end_before,
          endChanges: read.end_changes,
        });
      }),
      { numRuns: 1_000 },
    );
    const { record, endSetAt } = reader.read(
      '7,730,0,-0.500000,9224318016000.000000,1638976870.777001,,,,storage.gp1,,gib_hours,0.0400',
    );
    expect([record.validFrom, record.validUntil, record.recordedAt, endSetAt, record.organizationId]).toEqual([
      -500,
      9_224_318_016_000_000,
      1_638_976_870_777.001,
      null,
      null,
    ]);
  });

  it('reads a decimal as Number does (an id), and as the decimal times 1000 (an instant), however it is written', () => {
    const reader = new PackedRecordReader();
    const decimal = fc
      .tuple(
        fc.boolean(),
        fc.stringMatching(/^\d{0,18}$/),
        fc.option(fc.stringMatching(/^\d{0,18}$/), { nil: undefined }),
      )
      .map(
        ([negative, whole, fraction]) =>
          `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}`,
      )
      .filter((text) => /\d/.test(text) && !text.endsWith('.'));
    fc.assert(
      fc.property(decimal, (text) => {
        const { record } = reader.read(`1,${text},0,${text},,,,,,storage.gp1,,gib_hours,1`);
        expect(record.unitCount).toBe(Number(text));
        const [, sign, whole, fraction = ''] = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text)!;
        const thousandfold = `${sign}${whole}${fraction.slice(0, 3).padEnd(3, '0')}.${fraction.slice(3)}0`;
        expect(record.validFrom).toBe(Number(thousandfold));
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses text of another form: a field more or less, a number that is none', () => {
    const reader = new PackedRecordReader();
    const good = '7,730,0,1.000000,,,,,,storage.gp1,,gib_hours,1';
    expect(() => reader.read(good)).not.toThrow();
    for (const text of [
      `${good},`,
      good.slice(0, good.lastIndexOf(',')),
      good.replace('730', 'x'),
      good.replace('730', ''),
      good.replace('730', '-'),
      good.replace('730', '.'),
      good.replace('1.000000', 'x'),
      good.replace('1.000000', '.'),
      good.replace('1.000000', ''),
      good.replace('1.000000', '1e3'),
    ]) {
      expect(() => reader.read(text)).toThrow(/packed price record/);
    }
  });
});
