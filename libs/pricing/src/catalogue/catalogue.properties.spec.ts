import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { anyCodePoint, outsideText } from '../../../../test/support/outside-text';
import {
  explainProductKey,
  MAX_PRODUCT_KEY_LENGTH,
  parseProductKey,
  PRODUCT_FAMILIES,
  STORAGE_CLASSES,
} from './catalogue';

// Product keys come from price books, the CLI's arguments and callers of PricingService.

/** The key shapes of section 2.4, written out again rather than read from the catalogue. */
const SHAPES: Readonly<Record<string, RegExp>> = {
  compute_instance: /^compute\.[a-z][a-z0-9]*(\.[a-z0-9]+)+$/,
  network_floating_ip: /^network\.floating_ip$/,
  network_nat_gateway: /^network\.nat_gateway$/,
  network_vpc_egress: /^network\.vpc_egress$/,
  network_vpc_ingress: /^network\.vpc_ingress$/,
  network_vpc_internal: /^network\.vpc_internal$/,
  storage_volume: /^storage\.(gp1|st1|io1)$/,
  storage_snapshot: /^storage\.snapshot$/,
  observability_custom_metric: /^observability\.custom_metric$/,
  observability_api_request: /^observability\.api_request$/,
  observability_ingested_sample: /^observability\.ingested_sample$/,
};

const instanceType = fc.stringMatching(/^[a-z][a-z0-9]{0,6}(\.[a-z0-9]{1,5}){1,4}$/);
const validKey = fc.oneof(
  instanceType.map((type) => `compute.${type}`),
  fc.constantFrom(...STORAGE_CLASSES).map((storageClass) => `storage.${storageClass}`),
  fc.constantFrom(...PRODUCT_FAMILIES.flatMap((family) => family.fixedKeys ?? [])),
);
/** Near misses: a valid key with a character changed, added or removed. */
const nearMiss = fc
  .tuple(validKey, fc.nat(), fc.string({ unit: anyCodePoint, maxLength: 2 }), fc.nat(1))
  .map(([key, at, insert, remove]) => {
    const i = at % (key.length + 1);
    return key.slice(0, i) + insert + key.slice(i + remove);
  });
const anyKey = fc.oneof(
  outsideText(['compute.', 'storage.', '.', 'a.', 'a1.', '.1', 'network.', 'gp1']),
  nearMiss,
  validKey,
);

/** The longest explanation: its fixed text and at most 80 quoted characters (escaped, up to 6 each). */
const MAX_EXPLANATION = 400 + 6 * 80;

describe('parseProductKey and explainProductKey on any text', () => {
  it('never throw; a key is accepted exactly when it has no explanation, and only in the shape of its family', () => {
    fc.assert(
      fc.property(anyKey, (key) => {
        const parts = parseProductKey(key);
        const explanation = explainProductKey(key);
        if (parts) {
          expect(explanation).toBeUndefined();
          expect(key.length).toBeLessThanOrEqual(MAX_PRODUCT_KEY_LENGTH);
          expect(parts.productKey).toBe(key);
          expect(PRODUCT_FAMILIES[parts.familyOrder]).toBe(parts.family);
          expect(key).toMatch(SHAPES[parts.family.family]);
          const value = parts.dimensions && Object.values(parts.dimensions)[0];
          if (value !== undefined) expect(key).toBe(`${key.slice(0, key.indexOf('.'))}.${value}`);
        } else {
          expect(Object.values(SHAPES).some((shape) => shape.test(key) && key.length <= 64)).toBe(false);
          expect(typeof explanation).toBe('string');
          expect(explanation!.length).toBeLessThanOrEqual(MAX_EXPLANATION);
          expect(explanation).not.toMatch(/[\n\r]/);
        }
      }),
    );
  });

  it('accept every well-formed key of at most 64 characters, in the family of its shape', () => {
    fc.assert(
      fc.property(validKey, (key) => {
        fc.pre(key.length <= MAX_PRODUCT_KEY_LENGTH);
        const family = parseProductKey(key)?.family.family;
        expect(family).toBeDefined();
        expect(key).toMatch(SHAPES[family!]);
      }),
    );
  });
});

describe('parseProductKey and explainProductKey: linear time on 16 KB', () => {
  const both = (key: string) => [parseProductKey(key), explainProductKey(key)];
  it.each<[string, (n: number) => string]>([
    ['a dotted instance type', (n) => `compute.${repeated('a.', n)}`],
    ['dots', (n) => repeated('.', n)],
    ['a storage class without a dot', (n) => `storage.${repeated('a', n)}`],
    ['compute. repeated', (n) => repeated('compute.', n)],
    ['digit runs after a dot', (n) => `compute.a${repeated('.1', n)}`],
    ['an upper-case letter at the end', (n) => `compute.a.${repeated('a', n)}A`],
  ])('%s', (_what, inputOfLength) => {
    expectLinearTime(both, inputOfLength);
  });
});
