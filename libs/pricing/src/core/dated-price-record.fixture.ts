import type { DatedPriceRecord as PriceRecord } from './price-record';

let nextId = 1;

/** 1 January of `year`, midnight UTC, as the fixtures take instants. */
export const jan1 = (year: number): string => `${year}-01-01T00:00:00Z`;

/** TRANSITIONAL: a dated price record for unit specs: a list price of storage.gp1 from 2026-01-01, open. */
export function datedPriceRecord(
  fields: Partial<Omit<PriceRecord, 'validFrom' | 'validUntil'>> & {
    validFrom?: string | Date;
    validUntil?: string | Date | null;
  } = {},
): PriceRecord {
  const { validFrom, validUntil, ...rest } = fields;
  return {
    id: String(nextId++),
    productKey: 'storage.gp1',
    organizationId: null,
    unitType: 'gib_hours',
    unitCount: 730,
    amount: '0.0480',
    recordedAt: new Date('2025-12-01T00:00:00Z'),
    supersededBy: null,
    ...rest,
    validFrom: new Date(validFrom ?? '2026-01-01T00:00:00Z'),
    validUntil: validUntil === undefined || validUntil === null ? null : new Date(validUntil),
  };
}
