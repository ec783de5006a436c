import { parsePriceBook } from './price-book';

const good = {
  product_key: 'compute.g2.4',
  unit_type: 'seconds',
  unit_count: 3600,
  amount: '0.0610',
  valid_from: '2027-01-01T00:00:00Z',
  valid_until: null,
};

function errorsOf(json: unknown): readonly string[] {
  const parsed = parsePriceBook(json);
  return 'errors' in parsed ? parsed.errors : [];
}

describe('parsePriceBook', () => {
  it('reads a book with products and prices', () => {
    const parsed = parsePriceBook({
      description: 'x',
      products: [{ product_key: 'storage.io1', on_sale: false }],
      prices: [
        good,
        {
          ...good,
          product_key: 'storage.gp1',
          unit_type: 'gib_hours',
          organization_id: 'org_42',
          valid_from: undefined,
        },
      ],
    });
    expect(parsed).toEqual({
      book: {
        products: [{ index: 0, productKey: 'storage.io1', onSale: false }],
        prices: [
          {
            index: 0,
            productKey: 'compute.g2.4',
            organizationId: null,
            unitType: 'seconds',
            unitCount: 3600,
            amount: '0.0610',
            validFrom: Date.parse('2027-01-01T00:00:00Z'),
            validUntil: null,
          },
          {
            index: 1,
            productKey: 'storage.gp1',
            organizationId: 'org_42',
            unitType: 'gib_hours',
            unitCount: 3600,
            amount: '0.0610',
            validFrom: null,
            validUntil: null,
          },
        ],
      },
    });
  });

  it.each([
    [{ amount: 0.061 }, 'prices[1].amount: must be a JSON string'],
    [{ amount: '-1' }, 'prices[1].amount: "-1" is not a decimal amount'],
    [{ amount: '+1' }, 'prices[1].amount: "+1" is not a decimal amount'],
    [{ amount: '1e-3' }, 'prices[1].amount: "1e-3" is not a decimal amount'],
    [{ amount: '00.5' }, 'prices[1].amount: "00.5" is not a decimal amount'],
    [{ amount: '.5' }, 'prices[1].amount: ".5" is not a decimal amount'],
    [{ amount: '1.' }, 'prices[1].amount: "1." is not a decimal amount'],
    [{ amount: '' }, 'prices[1].amount: "" is not a decimal amount'],
    [{ amount: ' 1' }, 'prices[1].amount: " 1" is not a decimal amount'],
    // Beyond what the amount column holds (below 10^40, at most 38 decimals): 41 characters.
    [{ amount: `1${'0'.repeat(40)}` }, 'at most 40 characters'],
    [{ amount: `0.${'0'.repeat(38)}1` }, 'at most 40 characters'],
    [{ unit_count: 0 }, 'prices[1].unit_count: must be a positive JSON integer'],
    [{ unit_count: 1.5 }, 'prices[1].unit_count: must be a positive JSON integer'],
    [{ unit_count: '3600' }, 'prices[1].unit_count: must be a positive JSON integer'],
    [{ unit_count: 2 ** 31 }, 'prices[1].unit_count: must be a positive JSON integer'],
    [{ unit_type: 'hours' }, 'prices[1].unit_type: must be one of'],
    [{ unit_type: 'gib_hours' }, 'prices[1].unit_type: family compute_instance is billed in seconds, not gib_hours'],
    [{ product_key: 'compute.G2' }, 'prices[1].product_key: "compute.G2" is not compute.<instance_type>'],
    [{ product_key: 'storage.gp2' }, 'prices[1].product_key: "storage.gp2" has no storage class'],
    [{ product_key: 7 }, 'prices[1].product_key: must be a string'],
    [{ organization_id: '' }, 'prices[1].organization_id: must be 1 to 64'],
    [{ organization_id: null }, 'prices[1].organization_id: must be 1 to 64'],
    [{ valid_from: '2027-01-01T00:00:00' }, 'prices[1].valid_from: must be an RFC 3339 timestamp with an offset'],
    [{ valid_from: null }, 'prices[1].valid_from: must be an RFC 3339 timestamp'],
    // docs/decisions.md, "Leap seconds": a stored instant is stored as written, or not at all.
    [{ valid_from: '2026-12-31T23:59:60Z' }, 'prices[1].valid_from: a leap second (:60) cannot be stored'],
    [{ valid_until: '2027-06-30T23:59:60Z' }, 'prices[1].valid_until: a leap second (:60) cannot be stored'],
    [{ valid_from: '2026-12-31T23:58:60Z' }, 'prices[1].valid_from: must be an RFC 3339 timestamp'],
    [{ valid_until: '2026-12-31T00:00:00Z' }, 'prices[1].valid_until: must be after valid_from'],
    [{ valid_until: '2027-01-01T00:00:00Z' }, 'prices[1].valid_until: must be after valid_from'],
    [{ currency: 'EUR' }, 'prices[1]: unknown field "currency"'],
  ])('refuses %j naming the entry', (change, message) => {
    const errors = errorsOf({ prices: [good, { ...good, ...change }] });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(message);
  });

  it.each([`9`.repeat(40), `0.${'0'.repeat(37)}1`])('accepts %s, as long as the amount column holds', (amount) => {
    expect(errorsOf({ prices: [{ ...good, amount }] })).toEqual([]);
  });

  it('reports every problem, not just the first', () => {
    const errors = errorsOf({
      prices: [
        { ...good, amount: 1 },
        { ...good, unit_count: 0, valid_from: 'x' },
      ],
    });
    expect(errors.map((e) => e.split(':')[0])).toEqual([
      'prices[0].amount',
      'prices[1].unit_count',
      'prices[1].valid_from',
    ]);
  });

  it.each([
    [[], 'price book: must be a JSON object'],
    [null, 'price book: must be a JSON object'],
    [{ prices: {} }, 'prices: must be an array'],
    [{ price: [] }, 'price book: unknown field "price"'],
    [{ prices: [1] }, 'prices[0]: must be an object'],
    [{ products: [{ product_key: 'storage.io1' }] }, 'products[0].on_sale: must be true or false'],
    [
      {
        products: [
          { product_key: 'storage.io1', on_sale: false },
          { product_key: 'storage.io1', on_sale: true },
        ],
      },
      'products[1].product_key: "storage.io1" is already listed at products[0]',
    ],
    [{ description: 3 }, 'description: must be a string'],
  ])('refuses the book %j', (json, message) => {
    expect(errorsOf(json).join('\n')).toContain(message);
  });

  describe('quotes at most 80 characters of a value from the book', () => {
    const long = (prefix: string) => `${prefix}${'x'.repeat(10_000 - prefix.length)}`;
    const cut = (value: string) => `"${value.slice(0, 80)}…" (10000 characters)`;

    const key = long('compute.');
    const storage = long('storage.');
    const amount = long('1');
    const field = long('f');
    it.each([
      ['a product key', { product_key: key }, `prices[1].product_key: ${cut(key)} is not compute.`],
      ['a storage key', { product_key: storage }, `prices[1].product_key: ${cut(storage)} has no storage class`],
      ['an amount', { amount }, `prices[1].amount: ${cut(amount)} is not a decimal amount`],
      ['an unknown field', { [field]: 1 }, `prices[1]: unknown field ${cut(field)}`],
    ])('%s', (_what, change, message) => {
      const errors = errorsOf({ prices: [good, { ...good, ...change }] });
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(message);
      expect(errors[0].length).toBeLessThan(500);
    });

    it('never quotes a long key of no family, an organization id or a timestamp at all', () => {
      const errors = errorsOf({
        prices: [
          { ...good, product_key: long('foo.'), organization_id: 'o'.repeat(10_000), valid_from: '2'.repeat(10_000) },
        ],
      });
      expect(errors).toHaveLength(3);
      for (const error of errors) expect(error).not.toMatch(/xxxx|oooo|2222/);
    });

    it('escapes controls, so that a value cannot forge a line of the refusal', () => {
      const errors = errorsOf({ prices: [{ ...good, amount: '1\n  prices[9].amount: forged' }] });
      expect(errors).toEqual([expect.stringContaining('prices[0].amount: "1\\n  prices[9].amount: forged" is not')]);
    });
  });
});
