import fc from 'fast-check';
import { findDuplicateKey } from './json-duplicate-keys';

/** `key` as a JSON string, each character escaped as \uXXXX (each UTF-16 unit) or not, as `escaped` says. */
const encodeKey = (key: string, escaped: readonly boolean[]): string =>
  `"${[...key]
    .map((ch, i) =>
      escaped[i % Math.max(1, escaped.length)]
        ? Array.from({ length: ch.length }, (_, j) => `\\u${ch.charCodeAt(j).toString(16).padStart(4, '0')}`).join('')
        : JSON.stringify(ch).slice(1, -1),
    )
    .join('')}"`;

/** An object's text from its entries in order, keys spelled as `escaped` says, values as JSON. */
const objectText = (entries: readonly [string, unknown][], escaped: readonly boolean[]): string =>
  `{ ${entries.map(([key, value]) => `${encodeKey(key, escaped)} : ${JSON.stringify(value)}`).join(' ,\n ')} }`;

/** The first key of `entries` seen before, as the finder must report it. */
function firstRepeated(entries: readonly [string, unknown][]): string | undefined {
  const seen = new Set<string>();
  for (const [key] of entries) {
    if (seen.has(key)) return key;
    seen.add(key);
  }
  return undefined;
}

// A book or plan file is text an operator was handed; JSON.parse keeps the last of two equal keys
// without a word (json-duplicate-keys.ts).
describe('findDuplicateKey, on valid JSON', () => {
  it('finds none in what JSON.stringify writes, at any depth, indented or not', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, indented) => {
        expect(findDuplicateKey(JSON.stringify(value, null, indented ? 2 : undefined))).toBeUndefined();
      }),
    );
  });

  it('finds the first key an object repeats, however its keys are escaped, wherever the object sits', () => {
    const entries = fc.array(
      fc.tuple(fc.constantFrom('a', 'b', 'on_sale', '', 'é', '"', '\\', '😀'), fc.jsonValue({ maxDepth: 2 })),
      {
        maxLength: 8,
      },
    );
    fc.assert(
      fc.property(
        entries,
        fc.array(fc.boolean(), { maxLength: 4 }),
        fc.array(fc.constantFrom('[', '{"x":'), { maxLength: 4 }),
        (object, escaped, around) => {
          const closing = [...around]
            .reverse()
            .map((open) => (open === '[' ? ']' : '}'))
            .join('');
          const text = `${around.join('')}${objectText(object, escaped)}${closing}`;
          JSON.parse(text); // valid JSON, as the finder requires
          expect(findDuplicateKey(text)?.key).toBe(firstRepeated(object));
        },
      ),
    );
  });

  it('says the line of the repeated key, and keeps keys of different objects apart', () => {
    expect(findDuplicateKey('{\n"prices": [\n{"amount": "1",\n"amount": "2"}]}')).toEqual({ key: 'amount', line: 4 });
    expect(findDuplicateKey('[{"a":1},{"a":2},{"b":{"a":3},"a":[{"a":4}]}]')).toBeUndefined();
    expect(findDuplicateKey('{"a":{"b":1},"c":{"b":2},"a":3}')).toEqual({ key: 'a', line: 1 });
    expect(findDuplicateKey('{"a":"\\"a\\"","b":["a","a"]}')).toBeUndefined(); // strings that are values
  });

  it('runs through 200,000 levels of nesting without a stack', () => {
    const deep = `${'{"a":['.repeat(200_000)}${']}'.repeat(200_000)}`;
    expect(findDuplicateKey(deep)).toBeUndefined();
  });
});
