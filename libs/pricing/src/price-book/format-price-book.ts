import { compareNatural } from '../catalogue/natural-order';
import { formatInstant } from '../price-list/instant';
import type { PriceRecord } from '../price-list/price-record';

/**
 * The whole price book in the import format: list prices first, then organizations, each by
 * product key in natural order and `valid_from`. The same state gives the same bytes, and
 * importing the output changes nothing.
 */
export function formatPriceBook(records: readonly PriceRecord[], availability: ReadonlyMap<string, boolean>): string {
  const products = [...availability.entries()]
    .sort(([a], [b]) => compareNatural(a, b))
    .map(([productKey, onSale]) => ({ product_key: productKey, on_sale: onSale }));
  const prices = [...records]
    .sort(
      (a, b) =>
        compareOrganizations(a.organizationId, b.organizationId) ||
        compareNatural(a.productKey, b.productKey) ||
        a.validFrom.getTime() - b.validFrom.getTime(),
    )
    .map((r) => ({
      product_key: r.productKey,
      ...(r.organizationId !== null && { organization_id: r.organizationId }),
      unit_type: r.unitType,
      unit_count: r.unitCount,
      amount: r.amount,
      valid_from: formatInstant(r.validFrom),
      valid_until: r.validUntil && formatInstant(r.validUntil),
    }));
  return `${JSON.stringify({ products, prices }, null, 2)}\n`;
}

function compareOrganizations(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return compareNatural(a, b);
}
