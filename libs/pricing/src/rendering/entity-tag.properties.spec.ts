import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { ifMatchMatches, ifNoneMatchMatches, parseEntityTagList } from './entity-tag';

// If-None-Match and If-Match come from any client of GET /v1/pricing, before the rate limit has a say.

const CURRENT = 'W/"abcDEF_-012"';
/** etagc = %x21 / %x23-7E / obs-text (RFC 9110 8.8.3): commas, `W/` and spaces inside quotes included. */
const etagc = fc.oneof(
  fc.constantFrom('!', ',', 'W', '/', '*'),
  fc.integer({ min: 0x23, max: 0x7e }),
  fc.integer({ min: 0x80, max: 0xff }),
);
const opaque = fc
  .array(etagc, { maxLength: 24 })
  .map((chars) => `"${chars.map((c) => (typeof c === 'string' ? c : String.fromCharCode(c))).join('')}"`);
const entityTag = fc.tuple(fc.boolean(), opaque).map(([weak, tag]) => (weak ? `W/${tag}` : tag));
const ows = fc.constantFrom('', ' ', '\t', '  ', ' \t ');
/** One list separator: a comma with optional whitespace around it, and maybe empty elements. */
const separator = fc
  .tuple(ows, fc.integer({ min: 1, max: 3 }), ows)
  .map(([a, commas, b]) => a + ','.repeat(commas) + b);
const tagList = fc
  .tuple(fc.array(entityTag, { minLength: 1, maxLength: 12 }), fc.array(separator, { minLength: 12, maxLength: 12 }))
  .chain(([tags, separators]) =>
    fc.tuple(fc.constantFrom('', ',', ' , ', '\t'), fc.constantFrom('', ',', ' , ', '\t')).map(([before, after]) => ({
      tags,
      header: before + tags.map((tag, i) => (i === 0 ? tag : separators[i] + tag)).join('') + after,
    })),
  );
const opaquePart = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);

describe('parseEntityTagList and ifNoneMatchMatches on any text', () => {
  const anyHeader = fc.oneof(
    outsideText(['W/', '"', ',', ' ', '\t', 'W/"a"', '"a",', '*', 'W/"']),
    tagList.map(({ header }) => header),
  );

  it('never throw; a list parses to tags of the right form, and only a list that has the tag matches', () => {
    fc.assert(
      fc.property(anyHeader, (header) => {
        const tags = parseEntityTagList(header);
        if (tags) {
          expect(tags.length).toBeGreaterThan(0);
          for (const tag of tags) expect(tag).toMatch(/^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/);
        }
        const matches = ifNoneMatchMatches(header, CURRENT);
        const expected = header.trim() === '*' || (tags ?? []).some((tag) => opaquePart(tag) === opaquePart(CURRENT));
        expect(matches).toBe(expected);
      }),
    );
  });

  it('parses a well-formed list to its tags, empty elements and whitespace aside', () => {
    fc.assert(
      fc.property(tagList, ({ tags, header }) => {
        expect(parseEntityTagList(header)).toEqual(tags);
      }),
    );
  });

  it('matches a well-formed list exactly when one of its tags is the current tag, weak or strong', () => {
    fc.assert(
      fc.property(tagList, fc.nat(), fc.boolean(), ({ tags }, pick, weak) => {
        const current = `${weak ? 'W/' : ''}${opaquePart(tags[pick % tags.length])}`;
        expect(ifNoneMatchMatches(tags.join(', '), current)).toBe(true);
        const absent = tags.every((tag) => opaquePart(tag) !== '"absent"');
        expect(ifNoneMatchMatches(tags.join(', '), 'W/"absent"')).toBe(!absent);
      }),
    );
  });

  it('matches nothing once a well-formed list holds a malformed element', () => {
    const spoil = fc.constantFrom('x', 'W/x', '"unterminated', 'w/"a"', '"a" b', '"\u0001"', '"\u0100"', '*');
    fc.assert(
      fc.property(tagList, spoil, ({ header }, bad) => {
        expect(parseEntityTagList(`${header}, ${bad}`)).toBeUndefined();
        expect(ifNoneMatchMatches(`${header}, ${bad}`, CURRENT)).toBe(false);
      }),
    );
  });
});

describe('parseEntityTagList and ifNoneMatchMatches: linear time on 16 KB', () => {
  it.each<[string, (n: number) => string]>([
    ['W/ repeated', (n) => repeated('W/', n)],
    ['W/ repeated before a tag', (n) => `${repeated('W/', n - 4)}"a"`],
    ['commas and spaces', (n) => repeated(', ', n)],
    ['spaces before a missing comma', (n) => `"a"${repeated(' ', n)}x`],
    ['an unterminated tag', (n) => `W/"${repeated('a', n)}`],
    ['a tag full of commas, unterminated', (n) => `"${repeated(',', n)}`],
    ['many tags', (n) => repeated('W/"a",', n)],
    ['many tags, the last unterminated', (n) => `${repeated('"a", ', n - 2)}"a`],
    ['whitespace around *', (n) => `${repeated(' \t', n)}*`],
  ])('%s', (_what, inputOfLength) => {
    expectLinearTime((header) => ifNoneMatchMatches(header, CURRENT), inputOfLength);
  });
});

describe('ifMatchMatches on any text (strong comparison)', () => {
  const anyHeader = fc.oneof(
    outsideText(['W/', '"', ',', ' ', '\t', 'W/"a"', '"a",', '*', '"abcDEF_-012"']),
    tagList.map(({ header }) => header),
  );
  const STRONG = '"abcDEF_-012"';

  it('never throws; our weak tag matches only *', () => {
    fc.assert(
      fc.property(anyHeader, (header) => {
        expect(ifMatchMatches(header, CURRENT)).toBe(header.trim() === '*');
      }),
    );
  });

  it('a strong tag matches * or a list that holds it strong, character for character', () => {
    fc.assert(
      fc.property(anyHeader, (header) => {
        const tags = parseEntityTagList(header);
        expect(ifMatchMatches(header, STRONG)).toBe(header.trim() === '*' || (tags ?? []).includes(STRONG));
      }),
    );
    fc.assert(
      fc.property(tagList, fc.nat(), ({ tags }, pick) => {
        const tag = tags[pick % tags.length];
        expect(ifMatchMatches(tags.join(', '), tag)).toBe(!tag.startsWith('W/'));
      }),
    );
  });

  it.each<[string, (n: number) => string]>([
    ['many tags', (n) => repeated('"a",', n)],
    ['many tags, the last unterminated', (n) => `${repeated('"a", ', n - 2)}"a`],
    ['whitespace around *', (n) => `${repeated(' \t', n)}*`],
    ['W/ repeated', (n) => repeated('W/', n)],
  ])('costs time in proportion to the header: %s', (_what, inputOfLength) => {
    expectLinearTime((header) => ifMatchMatches(header, STRONG), inputOfLength);
  });
});
