import fc from 'fast-check';
import { joinedInParts, prettyJsonParts, widest } from './text-parts';

/** Past what a spread into a call takes here (about 130,000 values): the old code threw at this size. */
const MANY = 250_000;

describe('widest', () => {
  it('is the length of the longest text, 0 for none, for as many texts as there are', () => {
    expect(widest([])).toBe(0);
    expect(widest(['ab', 'abcd', 'a'])).toBe(4);
    expect(widest(Array.from({ length: MANY }, (_, i) => 'x'.repeat(i % 7)))).toBe(6);
  });
});

describe('prettyJsonParts', () => {
  it('gives the bytes of JSON.stringify(document, null, 2) and a newline, for any document', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 5 }),
        fc.array(fc.jsonValue(), { maxLength: 30 }),
        (head, items) => {
          const key = 'items';
          delete (head as Record<string, unknown>)[key];
          const expected = `${JSON.stringify({ ...head, [key]: items }, null, 2)}\n`;
          expect([...prettyJsonParts(head, key, items)].join('')).toBe(expected);
        },
      ),
    );
  });

  it('writes a long array in parts of 1,000 items, never as one string', () => {
    const items = Array.from({ length: 2_500 }, (_, i) => ({ n: i, nested: { list: [i, 'x'] } }));
    const parts = [...prettyJsonParts({ a: 1 }, 'items', items)];
    expect(parts).toHaveLength(3);
    expect(parts.join('')).toBe(`${JSON.stringify({ a: 1, items }, null, 2)}\n`);
  });
});

describe('joinedInParts', () => {
  it('joins lines 1,000 at a time', () => {
    const lines = Array.from({ length: 2_001 }, (_, i) => `${i}\n`);
    const parts = [...joinedInParts(lines)];
    expect(parts).toHaveLength(3);
    expect(parts.join('')).toBe(lines.join(''));
    expect([...joinedInParts([])]).toEqual([]);
  });
});
