import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../test/support/linear-time';
import { outsideText } from '../../test/support/outside-text';
import { ifNoneMatchMatches, preferredCoding } from './conditional.mjs';

// Accept-Encoding and If-None-Match reach the page server from any client.

const ETAG = 'W/"abcDEF_-012"';

describe('preferredCoding', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['*', 'br'],
    ['*;q=0, gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['identity;q=1, br;q=0.5', 'identity'],
    ['deflate', 'identity'],
    ['br;q=2, gzip', 'gzip'], // a malformed element counts as absent
    ['GZIP ; Q=0.8', 'gzip'],
  ])('%j: %s', (header, coding) => {
    expect(preferredCoding(header)).toBe(coding);
  });

  it('never throws, and answers one of the codings kept', () => {
    fc.assert(
      fc.property(outsideText(['gzip', 'br', ',', ';q=', '0.5', '*', ' ']), (header) => {
        expect(['br', 'gzip', 'identity']).toContain(preferredCoding(header));
      }),
    );
  });

  it.each<[string, (n: number) => string]>([
    ['commas', (n) => repeated(',', n)],
    ['elements with weights', (n) => repeated('gzip;q=0.5, ', n)],
    ['one long token', (n) => repeated('a', n)],
    ['spaces before a weight', (n) => `br${repeated(' ', n - 8)};q=0.5`],
  ])('costs time in proportion to the header: %s', (_what, inputOfLength) => {
    expectLinearTime(preferredCoding, inputOfLength);
  });
});

describe('ifNoneMatchMatches', () => {
  const opaque = fc
    .array(fc.constantFrom('a', 'B', '9', '_', '-', ',', 'W', '/', '!', '\u00e9'), { maxLength: 16 })
    .map((chars) => `"${chars.join('')}"`);
  const tag = fc.tuple(fc.boolean(), opaque).map(([weak, t]) => (weak ? `W/${t}` : t));
  const list = fc.array(tag, { minLength: 1, maxLength: 8 });

  it.each([
    [ETAG, true],
    ['"abcDEF_-012"', true], // the strong form of our tag
    ['*', true],
    [' * ', true],
    [`"a", W/"b",${ETAG} , "c"`, true],
    ['W/"other"', false],
    [`${ETAG}, W/x`, false], // malformed: matches nothing
    [`${ETAG} junk`, false],
    ['"unterminated', false],
    [undefined, false],
    ['', false],
  ])('%j: %s', (header, matches) => {
    expect(ifNoneMatchMatches(header, ETAG)).toBe(matches);
  });

  it('never throws; a well-formed list matches exactly when it holds the tag, weak or strong', () => {
    fc.assert(
      fc.property(outsideText(['W/', '"', ',', ' ', '*', ETAG]), (header) => {
        expect(typeof ifNoneMatchMatches(header, ETAG)).toBe('boolean');
      }),
    );
    fc.assert(
      fc.property(list, fc.constantFrom(', ', ',', ' ,\t'), (tags, separator) => {
        const holds = tags.some((t) => t.replace(/^W\//, '') === '"abcDEF_-012"');
        expect(ifNoneMatchMatches(tags.join(separator), ETAG)).toBe(holds);
        expect(ifNoneMatchMatches([...tags, ETAG].join(separator), ETAG)).toBe(true);
      }),
    );
  });

  it.each<[string, (n: number) => string]>([
    ['many tags', (n) => repeated('W/"a",', n)],
    ['an unterminated tag', (n) => `W/"${repeated('a', n)}`],
    ['commas and spaces', (n) => repeated(', ', n)],
    ['W/ repeated', (n) => repeated('W/', n)],
  ])('costs time in proportion to the header: %s', (_what, inputOfLength) => {
    expectLinearTime((header) => ifNoneMatchMatches(header, ETAG), inputOfLength);
  });
});
