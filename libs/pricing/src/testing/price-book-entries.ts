import type { UnitType } from '../catalogue/catalogue';

/** An entry of a price book (the file format), for tests: a list price unless `organization_id` is given. */
export interface PriceEntry {
  readonly product_key: string;
  readonly organization_id?: string;
  readonly unit_type: UnitType;
  readonly unit_count: number;
  readonly amount: string;
  readonly valid_from?: string;
  readonly valid_until?: string | null;
}

/** A list price entry of a price book. */
export function listPrice(
  productKey: string,
  unitType: UnitType,
  unitCount: number,
  amount: string,
  validFrom: string,
  validUntil: string | null = null,
): PriceEntry {
  return {
    product_key: productKey,
    unit_type: unitType,
    unit_count: unitCount,
    amount,
    valid_from: validFrom,
    valid_until: validUntil,
  };
}

/** An organization's agreed price entry of a price book. */
export function organizationPrice(organizationId: string, ...args: Parameters<typeof listPrice>): PriceEntry {
  return { ...listPrice(...args), organization_id: organizationId };
}
