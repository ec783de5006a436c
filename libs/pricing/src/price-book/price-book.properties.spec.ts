import fc from 'fast-check';
import { outsideText } from '../../../../test/support/outside-text';
import { parseProductKey, PRODUCT_FAMILIES, STORAGE_CLASSES } from '../catalogue/catalogue';
import { formatInstant } from '../core/instant';
import { parsePriceBook, PRICE_FIELDS as PRICE_FIELD_SET, PRODUCT_FIELDS as PRODUCT_FIELD_SET } from './price-book';

// A price book is a file an operator was handed: any JSON value at all may be in it.

/** The longest problem: a path, the longest fixed text, 80 quoted characters (escaped, up to 6 each). */
const MAX_PROBLEM_LENGTH = 1_000;

const PRICE_FIELDS = [...PRICE_FIELD_SET];
const PRODUCT_FIELDS = [...PRODUCT_FIELD_SET];

const validKey = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9]{0,6}(\.[a-z0-9]{1,5}){1,4}$/).map((type) => `compute.${type}`),
  fc.constantFrom(...STORAGE_CLASSES).map((storageClass) => `storage.${storageClass}`),
  fc.constantFrom(...PRODUCT_FAMILIES.flatMap((family) => family.fixedKeys ?? [])),
);
const amount = fc
  .tuple(fc.stringMatching(/^(0|[1-9]\d{0,19})$/), fc.option(fc.stringMatching(/^\d{1,18}$/), { nil: undefined }))
  .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`));
const instant = fc.date({
  min: new Date('2000-01-01T00:00:00Z'),
  max: new Date('2100-01-01T00:00:00Z'),
  noInvalidDate: true,
});

/** A well-formed price entry, and the entry parsePriceBook should make of it. */
const goodPrice = fc
  .record({
    key: validKey,
    organizationId: fc.option(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/), { nil: undefined }),
    unitCount: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    amount,
    from: fc.option(instant, { nil: undefined }),
    lengthMs: fc.option(fc.integer({ min: 1, max: 10 ** 11 }), { nil: undefined }),
  })
  .map((p) => {
    const unitType = parseProductKey(p.key)!.family.unitType;
    const until = p.from && p.lengthMs !== undefined ? new Date(p.from.getTime() + p.lengthMs) : null;
    return {
      json: {
        product_key: p.key,
        ...(p.organizationId === undefined ? {} : { organization_id: p.organizationId }),
        unit_type: unitType,
        unit_count: p.unitCount,
        amount: p.amount,
        ...(p.from ? { valid_from: formatInstant(p.from) } : {}),
        ...(until ? { valid_until: formatInstant(until) } : p.from ? { valid_until: null } : {}),
      },
      entry: {
        productKey: p.key,
        organizationId: p.organizationId ?? null,
        unitType,
        unitCount: p.unitCount,
        amount: p.amount,
        validFrom: p.from?.getTime() ?? null,
        validUntil: until?.getTime() ?? null,
      },
    };
  });

/** Values an entry's field may hold in a hostile book: hostile text, any JSON, and near misses. */
const hostileValue = fc.oneof(
  outsideText(['compute.', '0', '.', '-', '2027-01-01T00:00:00Z', 'org_', '"', '\\']),
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(null, true, 0, -1, 1.5, 2 ** 31, 1e308, '', 'seconds', 'gib_hours', '0.0610'),
);
const hostileEntry = (fields: readonly string[]) =>
  fc.dictionary(fc.oneof(fc.constantFrom(...fields), outsideText()), hostileValue, { maxKeys: 5 });
const hostileBook = fc.oneof(
  fc.record(
    {
      description: hostileValue,
      products: fc.oneof(fc.array(hostileEntry(PRODUCT_FIELDS), { maxLength: 4 }), hostileValue),
      prices: fc.oneof(fc.array(hostileEntry(PRICE_FIELDS), { maxLength: 4 }), hostileValue),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
  fc.dictionary(outsideText(), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

describe('parsePriceBook on any JSON value', () => {
  it('never throws; a refusal names every problem on one line of bounded length', () => {
    fc.assert(
      fc.property(hostileBook, (json) => {
        const parsed = parsePriceBook(json);
        if ('errors' in parsed) {
          expect(parsed.errors.length).toBeGreaterThan(0);
          for (const error of parsed.errors) {
            expect(error).not.toMatch(/[\n\r\u2028\u2029]/);
            expect(error.length).toBeLessThanOrEqual(MAX_PROBLEM_LENGTH);
            expect(error).toMatch(/^(price book|description|products|prices)(\[\d+\])?[.:]/);
          }
        } else {
          expect(Array.isArray(parsed.book.prices) && Array.isArray(parsed.book.products)).toBe(true);
        }
      }),
    );
  });

  it('accepts a well-formed book and keeps every entry as written', () => {
    const products = fc.uniqueArray(
      fc.record({ product_key: validKey, on_sale: fc.boolean() }).filter((p) => p.product_key.length <= 64),
      { selector: (p) => p.product_key, maxLength: 5 },
    );
    fc.assert(
      fc.property(
        products,
        fc.array(goodPrice, { maxLength: 8 }),
        fc.option(fc.string(), { nil: undefined }),
        (availability, prices, description) => {
          fc.pre(prices.every((p) => p.entry.productKey.length <= 64));
          const parsed = parsePriceBook({
            ...(description === undefined ? {} : { description }),
            products: availability,
            prices: prices.map((p) => p.json),
          });
          expect(parsed).toEqual({
            book: {
              products: availability.map((p, index) => ({ index, productKey: p.product_key, onSale: p.on_sale })),
              prices: prices.map((p, index) => ({ index, ...p.entry })),
            },
          });
        },
      ),
    );
  });

  it('refuses a well-formed book with one entry spoiled, naming that entry alone', () => {
    const spoil = fc.constantFrom<[string, unknown]>(
      ['amount', '-1'],
      ['amount', '1e3'],
      ['amount', 0.5],
      ['unit_count', 0],
      ['unit_type', 'hours'],
      ['product_key', 'compute.G2'],
      ['organization_id', ''],
      ['valid_from', '2027-01-01'],
      ['currency', 'EUR'],
    );
    fc.assert(
      fc.property(
        fc.array(goodPrice, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        spoil,
        (prices, pick, [field, value]) => {
          fc.pre(prices.every((p) => p.entry.productKey.length <= 64));
          const bad = pick % prices.length;
          const json = prices.map((p, i) => (i === bad ? { ...p.json, [field]: value } : p.json));
          const parsed = parsePriceBook({ prices: json });
          expect('errors' in parsed).toBe(true);
          const errors = (parsed as { errors: string[] }).errors;
          expect(errors.every((error) => error.startsWith(`prices[${bad}]`))).toBe(true);
        },
      ),
    );
  });
});
