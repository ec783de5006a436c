import { compareNaturalKeys, naturalKey, sortNatural, type NaturalKey } from '../catalogue/natural-order';
import { formatInstant } from '../price-list/instant';
import type { PriceRecord } from '../price-list/price-record';

/**
 * The whole price book in the import format: list prices first, then organizations, each by
 * product key in natural order and `valid_from`. The same state gives the same bytes, and
 * importing the output changes nothing.
 */
export function formatPriceBook(records: readonly PriceRecord[], availability: ReadonlyMap<string, boolean>): string {
  const products = sortNatural([...availability.entries()], ([key]) => key).map(([productKey, onSale]) => ({
    product_key: productKey,
    on_sale: onSale,
  }));
  const prices = sortInBookOrder(records, (r) => r).map((r) => ({
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

/** Where a price stands in the book's order. */
export interface BookOrderTerms {
  readonly organizationId: string | null;
  readonly productKey: string;
  readonly validFrom: Date;
}

/**
 * Sorts in the price book's order: list prices first, then organizations, each by product key
 * in natural order, then `valid_from`. Each key is encoded once (natural-order.ts), so large
 * books sort with plain string comparisons.
 */
export function sortInBookOrder<T>(items: readonly T[], termsOf: (item: T) => BookOrderTerms): T[] {
  return items
    .map((item) => {
      const { organizationId, productKey, validFrom } = termsOf(item);
      return {
        item,
        organization: organizationId === null ? null : naturalKey(organizationId),
        productKey: naturalKey(productKey),
        validFrom: validFrom.getTime(),
      };
    })
    .sort(
      (a, b) =>
        compareOrganizations(a.organization, b.organization) ||
        compareNaturalKeys(a.productKey, b.productKey) ||
        a.validFrom - b.validFrom,
    )
    .map(({ item }) => item);
}

function compareOrganizations(a: NaturalKey | null, b: NaturalKey | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return compareNaturalKeys(a, b);
}
