import type { PriceRecord } from './price-record';

let nextId = 1;

/**
 * A price record for unit specs: a list price of storage.gp1 from 2026-01-01, open, recorded
 * 2025-12-01. Instants as text, Dates or epoch ms.
 */
export function priceRecord(
  fields: Partial<Omit<PriceRecord, 'validFrom' | 'validUntil' | 'recordedAt'>> & {
    validFrom?: string | Date | number;
    validUntil?: string | Date | number | null;
    recordedAt?: string | Date | number;
  } = {},
): PriceRecord & { readonly recordedAt: number } {
  const { validFrom, validUntil, recordedAt, ...rest } = fields;
  return {
    id: nextId++,
    productKey: 'storage.gp1',
    organizationId: null,
    unitType: 'gib_hours',
    unitCount: 730,
    amount: '0.0480',
    supersededBy: null,
    ...rest,
    validFrom: new Date(validFrom ?? '2026-01-01T00:00:00Z').getTime(),
    validUntil: validUntil === undefined || validUntil === null ? null : new Date(validUntil).getTime(),
    recordedAt: new Date(recordedAt ?? '2025-12-01T00:00:00Z').getTime(),
  };
}

/** 1 January of `year`, midnight UTC, as the fixtures take instants. */
export const jan1 = (year: number): string => `${year}-01-01T00:00:00Z`;
