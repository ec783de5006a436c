import type { HeldPrice } from './held-price';

let nextId = 1;

/** A held price for unit specs: a list price of storage.gp1 from 2026-01-01, open. Instants as text, Dates or epoch ms. */
export function heldPrice(
  fields: Partial<Omit<HeldPrice, 'validFrom' | 'validUntil'>> & {
    validFrom?: string | Date | number;
    validUntil?: string | Date | number | null;
  } = {},
): HeldPrice {
  const { validFrom, validUntil, ...rest } = fields;
  return {
    id: nextId++,
    productKey: 'storage.gp1',
    organizationId: null,
    unitType: 'gib_hours',
    unitCount: 730,
    amount: '0.0480',
    ...rest,
    validFrom: new Date(validFrom ?? '2026-01-01T00:00:00Z').getTime(),
    validUntil: validUntil === undefined || validUntil === null ? null : new Date(validUntil).getTime(),
  };
}
