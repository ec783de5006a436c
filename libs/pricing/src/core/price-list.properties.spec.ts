import fc from 'fast-check';
import { UNIT_TYPES } from '../catalogue/catalogue';
import { entryBytes, entryText, listEntry } from './price-list';
import type { PriceRecord } from './price-record';

// entryText writes each entry of the public list without the object JSON.stringify would read:
// it must be that text, byte for byte, for any record the book can hold (and any it should not).

/** Product keys of every family, and any text at all (a hand-written row). */
const productKey = fc.oneof(
  fc.constantFrom('storage.gp1', 'storage.snapshot', 'network.floating_ip', 'observability.api_request'),
  fc.stringMatching(/^[a-z0-9]{1,6}(\.[a-z0-9]{1,6}){0,3}$/).map((type) => `compute.${type}`),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 40 }).map((text) => `compute.${text}`),
);
const instant = fc.oneof(
  fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }),
  fc.integer({ min: 0, max: 4_000_000 }).map((s) => s * 1000 + 1_700_000_000_000),
  fc.integer({ min: -8.64e15, max: 8.64e15 }),
);
const record: fc.Arbitrary<PriceRecord> = fc.record({
  id: fc.nat(),
  productKey,
  organizationId: fc.constant(null),
  unitType: fc.oneof(fc.constantFrom(...UNIT_TYPES), fc.string({ unit: 'binary', maxLength: 12 })) as fc.Arbitrary<
    PriceRecord['unitType']
  >,
  unitCount: fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.double()),
  amount: fc.oneof(fc.stringMatching(/^(0|[1-9]\d{0,8})(\.\d{1,12})?$/), fc.string({ unit: 'binary', maxLength: 20 })),
  validFrom: instant,
  validUntil: fc.option(instant, { nil: null }),
  supersededBy: fc.constant(null),
});

describe('entryText on any record', () => {
  it("is JSON.stringify of the record's entry, and entryBytes its UTF-8", () => {
    fc.assert(
      fc.property(record, (priced) => {
        const expected = JSON.stringify(listEntry(priced));
        expect(entryText(priced)).toBe(expected);
        expect(entryBytes(priced).equals(Buffer.from(expected))).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });
});
