import { toPriceRecord, type PriceRecordRow } from './price-book-rows';

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
