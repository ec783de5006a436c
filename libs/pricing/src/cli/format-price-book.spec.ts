import { priceRecord } from '../core/price-record.fixture';
import { formatPriceBook, priceBookParts } from './format-price-book';

describe('the export of the price book', () => {
  // A million records would come near the longest string V8 holds: the book is written in parts.
  it('writes a large book in parts of the same bytes as one string would be', () => {
    const many = 5_000;
    const records = Array.from({ length: many }, (_, i) =>
      priceRecord({ productKey: `compute.g2.${i % 100}`, organizationId: `org_${Math.floor(i / 100)}` }),
    );
    const availability = new Map([['storage.io1', false]]);
    const parts = [...priceBookParts(records, availability)];
    expect(parts).toHaveLength(many / 1_000 + 1);
    const book = JSON.parse(parts.join('')) as { products: unknown[]; prices: { product_key: string }[] };
    expect(book.products).toEqual([{ product_key: 'storage.io1', on_sale: false }]);
    expect(book.prices).toHaveLength(many);
    expect(book.prices[0]).toMatchObject({ product_key: 'compute.g2.0', organization_id: 'org_0' });
    expect(parts.join('')).toBe(formatPriceBook(records, availability));
  });
});
