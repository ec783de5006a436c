import { priceRecord } from '../core/price-record.fixture';
import { PriceBookRefusedError } from '../errors/pricing-error';
import { formatPriceBook, MAX_PRINTED_VALUE, printableListBody, priceBookParts } from './format-price-book';

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

describe('export and show of values written around the rules', () => {
  it('export escapes what JSON.stringify leaves raw, and reads back as the same values', () => {
    const records = [priceRecord({ organizationId: 'org\u202e\u0085\u2028' })];
    const text = formatPriceBook(records, new Map());
    expect(text).toContain('"org\\u202e\\u0085\\u2028"');
    expect((JSON.parse(text) as { prices: { organization_id: string }[] }).prices[0].organization_id).toBe(
      'org\u202e\u0085\u2028',
    );
    // A book of ordinary values: JSON.stringify's bytes, as ever.
    const plain = [priceRecord()];
    expect(formatPriceBook(plain, new Map())).toBe(
      `${JSON.stringify({ products: [], prices: JSON.parse(formatPriceBook(plain, new Map())).prices }, null, 2)}\n`,
    );
  });

  it('export refuses a value longer than MAX_PRINTED_VALUE before printing anything, naming the record', () => {
    const long = priceRecord({ id: 7, organizationId: 'o'.repeat(MAX_PRINTED_VALUE + 1) });
    expect(() => priceBookParts([priceRecord(), long], new Map())).toThrow(PriceBookRefusedError);
    expect(() => priceBookParts([long], new Map())).toThrow(
      /export: price record 7 \(product_key "storage\.gp1"\) has organization_id \(1025 characters\)/,
    );
    expect(() =>
      priceBookParts([priceRecord({ organizationId: 'o'.repeat(MAX_PRINTED_VALUE) })], new Map()),
    ).not.toThrow();
  });

  it('show gives back the very body when nothing is to be escaped, an escaped one otherwise, and refuses a long value', () => {
    const body = Buffer.from(
      '{"families":[{"family":"compute_instance","prices":[{"product_key":"compute.g2.4","unit_type":"seconds"}]}]}',
    );
    expect(printableListBody(body)).toBe(body);
    const bidi = Buffer.from(body.toString().replace('"seconds"', '"seconds\u202e"'));
    expect(printableListBody(bidi).toString()).toBe(body.toString().replace('"seconds"', '"seconds\\u202e"'));
    const long = Buffer.from(body.toString().replace('"seconds"', `"${'s'.repeat(MAX_PRINTED_VALUE + 1)}"`));
    expect(() => printableListBody(long)).toThrow(
      /show: families\[0\]\.prices\[0\] \(product_key "compute\.g2\.4"\) has unit_type \(1025 characters\)/,
    );
  });
});
