import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { type ContentCoding, negotiateContentCoding } from './accept-encoding';

// Accept-Encoding comes from any client of GET /v1/pricing, before the rate limit has a say.

interface Element {
  readonly coding: string;
  /** The weight as written (`0.5`, `1.000`), or none. */
  readonly q?: string;
  readonly text: string;
}

const ows = fc.constantFrom('', ' ', '\t', ' \t');
const coding = fc.oneof(
  fc.constantFrom('br', 'gzip', 'x-gzip', 'identity', '*', 'deflate', 'zstd', 'compress'),
  fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,8}$/),
);
const qvalue = fc
  .oneof(
    fc.tuple(fc.constant('0'), fc.option(fc.stringMatching(/^\d{0,3}$/), { nil: undefined })),
    fc.tuple(fc.constant('1'), fc.option(fc.stringMatching(/^0{0,3}$/), { nil: undefined })),
  )
  .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`));
const element: fc.Arbitrary<Element> = fc
  .tuple(coding, fc.boolean(), fc.option(qvalue, { nil: undefined }), ows, ows, fc.constantFrom('q', 'Q'))
  .map(([name, upper, q, before, after, letter]) => {
    const written = upper ? name.toUpperCase() : name;
    return {
      coding: name.toLowerCase(),
      q,
      text: q === undefined ? written : `${written}${before};${after}${letter}=${q}`,
    };
  });
/** Elements that are not `coding [weight]`: each counts as absent. */
const malformed = fc.constantFrom(
  'g zip',
  'gzip;q=2',
  'gzip;q=0.0001',
  'br;q=',
  'br;level=1',
  'gzip;q=0.5;x=1',
  ';q=1',
  'é',
);

/**
 * What RFC 9110 12.5.3 and the rules of docs/decisions.md ("Compression") give, from the elements themselves: the weight of
 * a coding is its own (the last one named), else that of `*`; identity is acceptable when not
 * named, but only when no encoding is; the heaviest acceptable coding wins, br before gzip
 * before the plain body at equal weight, and the plain body when nothing is acceptable.
 */
function expected(elements: readonly Element[]): ContentCoding {
  const weights = new Map<string, number>();
  for (const e of elements) weights.set(e.coding === 'x-gzip' ? 'gzip' : e.coding, e.q === undefined ? 1 : Number(e.q));
  const weight = (c: string) => weights.get(c) ?? weights.get('*');
  const identity = weight('identity') ?? 0;
  const candidates = (['br', 'gzip'] as const)
    .map((c) => ({ c, w: weight(c) ?? 0 }))
    .filter(({ w }) => w > 0 && w >= identity);
  if (candidates.length === 0) return 'identity';
  return candidates.reduce((best, next) => (next.w > best.w ? next : best)).c;
}

describe('negotiateContentCoding on any header', () => {
  it('never throws and answers one of the codings kept', () => {
    fc.assert(
      fc.property(outsideText([',', ' ', ';', 'q=', 'gzip', 'br;q=0.5,', '\t', '*']), (header) => {
        expect(['identity', 'gzip', 'br']).toContain(negotiateContentCoding(header));
      }),
    );
  });

  it('answers what the elements of a well-formed header give, whatever malformed elements come with them', () => {
    const header = fc.tuple(
      fc.array(element, { maxLength: 8 }),
      fc.array(malformed, { maxLength: 3 }),
      fc.array(ows, { minLength: 12, maxLength: 12 }),
    );
    fc.assert(
      fc.property(header, fc.nat(), ([elements, bad, spaces], seed) => {
        const parts = elements.map((e) => e.text);
        for (const [i, b] of bad.entries()) parts.splice((seed + i) % (parts.length + 1), 0, b);
        const text = parts.map((part, i) => `${spaces[i % 12]}${part}${spaces[(i + 5) % 12]}`).join(',');
        expect(negotiateContentCoding(text)).toBe(expected(elements));
      }),
    );
  });

  it('gives the same answer in any order when no coding is named twice', () => {
    const distinct = fc.uniqueArray(element, {
      selector: (e) => (e.coding === 'x-gzip' ? 'gzip' : e.coding),
      maxLength: 8,
    });
    fc.assert(
      fc.property(distinct, fc.func(fc.integer()), (elements, order) => {
        const shuffled = [...elements].sort((a, b) => order(a.text) - order(b.text));
        expect(negotiateContentCoding(shuffled.map((e) => e.text).join(', '))).toBe(
          negotiateContentCoding(elements.map((e) => e.text).join(', ')),
        );
      }),
    );
  });

  it('never answers a coding the header refuses with q=0', () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 6 }), fc.constantFrom('br', 'gzip'), (elements, refused) => {
        const header = [...elements.map((e) => e.text), `${refused};q=0`].join(', ');
        expect(negotiateContentCoding(header)).not.toBe(refused);
      }),
    );
  });
});

describe('negotiateContentCoding: linear time on 16 KB', () => {
  it.each<[string, (n: number) => string]>([
    ['spaces before a missing ;', (n) => `gzip${repeated(' ', n)}x`],
    ['spaces around ; before a missing q', (n) => `gzip${repeated(' ', n / 2)};${repeated(' ', n / 2)}x`],
    ['tabs before a missing q-value', (n) => `gzip${repeated('\t', n)};q=`],
    ['commas', (n) => repeated(',', n)],
    ['semicolons', (n) => repeated(';', n)],
    ['one long token', (n) => repeated('a', n)],
    ['a long q-value', (n) => `gzip;q=0.${repeated('0', n)}`],
    ['many weighted elements', (n) => repeated('gzip;q=0.5,', n)],
    ['many malformed elements', (n) => repeated('g zip;q=2,', n)],
    [
      'many distinct codings',
      (n) =>
        Array.from({ length: n }, (_, i) => `c${i};q=0.1`)
          .join(',')
          .slice(0, n),
    ],
    ['q= repeated', (n) => `br;${repeated('q=', n)}`],
  ])('%s', (_what, inputOfLength) => {
    expectLinearTime(negotiateContentCoding, inputOfLength);
  });
});
