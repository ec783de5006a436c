import { sortNatural } from '../catalogue/natural-order';
import { formatInstant } from '../core/instant';
import type { PriceRecord } from '../core/price-record';
import { sortInBookOrder } from '../price-book/book-order';
import { prettyJsonParts } from './text-parts';

/**
 * The whole price book in the import format, in parts (text-parts.ts): list prices first, then
 * organizations, each by product key in natural order and `valid_from`. The same state gives the
 * same bytes, and importing the output changes nothing.
 */
export function priceBookParts(
  records: readonly PriceRecord[],
  availability: ReadonlyMap<string, boolean>,
): Generator<string, void, void> {
  const products = sortNatural([...availability.entries()], ([key]) => key).map(([productKey, onSale]) => ({
    product_key: productKey,
    on_sale: onSale,
  }));
  return prettyJsonParts({ products }, 'prices', bookEntries(sortInBookOrder(records, (r) => r)));
}

/** The whole price book in one string, for a book known to be small. */
export function formatPriceBook(records: readonly PriceRecord[], availability: ReadonlyMap<string, boolean>): string {
  return [...priceBookParts(records, availability)].join('');
}

function* bookEntries(records: readonly PriceRecord[]): Generator<Record<string, unknown>, void, void> {
  for (const r of records) {
    yield {
      product_key: r.productKey,
      ...(r.organizationId !== null && { organization_id: r.organizationId }),
      unit_type: r.unitType,
      unit_count: r.unitCount,
      amount: r.amount,
      valid_from: formatInstant(r.validFrom),
      valid_until: r.validUntil === null ? null : formatInstant(r.validUntil),
    };
  }
}
