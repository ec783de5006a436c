import { compareNaturalKeys, naturalKey, type NaturalKey } from '../catalogue/natural-order';
import type { PriceRecord } from '../core/price-record';

/** Where a price stands in the book's order. */
export type BookOrderTerms = Pick<PriceRecord, 'organizationId' | 'productKey' | 'validFrom'>;

/**
 * Sorts in the price book's order (docs/price-book-cli.md, "export" and "The plan"): list prices
 * first, then organizations, each by product key in natural order, then `valid_from`. Each key is
 * encoded once (natural-order.ts), so large books sort with plain string comparisons.
 */
export function sortInBookOrder<T>(items: readonly T[], termsOf: (item: T) => BookOrderTerms): T[] {
  return items
    .map((item) => {
      const { organizationId, productKey, validFrom } = termsOf(item);
      return {
        item,
        organization: organizationId === null ? null : naturalKey(organizationId),
        productKey: naturalKey(productKey),
        validFrom,
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
