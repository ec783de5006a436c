import fc from 'fast-check';
import { expectLinearTime, LARGE_OUTPUT, repeated } from '../../../../test/support/linear-time';
import { anyCodePoint, outsideText } from '../../../../test/support/outside-text';
import { escapeJson, escapeUnprintable, escapeWord, hasUnprintable } from './bounded-text';

// What `changes` and `history` print comes from stored rows, which anyone who can write the
// database chose: each value goes through escapeWord (text) or escapeJson (JSON).

/** What a terminal acts on or hides, and the characters the issue names, one of each kind. */
const HOSTILE = [
  '\u0000',
  '\u001b[2K\r', // erase the line, back to its start
  '\n',
  '\t',
  '\u007f',
  '\u0085', // NEL (C1)
  '\u009b', // CSI (C1)
  '\u061c',
  '\u200b',
  '\u200e',
  '\u200f',
  '\u2028',
  '\u2029',
  '\u202a',
  '\u202e',
  '\u2060',
  '\u2064',
  '\u2066',
  '\u2069',
  '\ufeff',
  '\ud800', // a lone surrogate
  '\udfff',
  '\ue000', // private use
  '\u{f0000}',
  '\u0378', // unassigned
  '\\',
  '\\u202e', // text that looks like an escape
  ' ',
  '\u00a0',
  '\u3000',
];
const RAW = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/u;
const RAW_IN_A_WORD = /[\p{Zs}\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/u;

/** escapeWord undone: a reader of the output gets back the stored value, whatever it was. */
const unescapeWord = (text: string): string =>
  text.replace(/\\(\\|u[0-9a-f]{4})/g, (_, escape: string) =>
    escape === '\\' ? '\\' : String.fromCharCode(parseInt(escape.slice(1), 16)),
  );

const anyText = fc.oneof(outsideText(HOSTILE), fc.string({ unit: anyCodePoint }));

describe('escapeWord', () => {
  it('leaves nothing a terminal acts on or hides, no space, and reads back as the value, whatever it is', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const word = escapeWord(text);
        expect(word).not.toMatch(RAW_IN_A_WORD);
        // Every backslash starts an escape: `\\` or `\uXXXX`.
        expect(word.replace(/\\(\\|u[0-9a-f]{4})/g, '')).not.toContain('\\');
        expect(unescapeWord(word)).toBe(text === '' ? '""' : text);
      }),
    );
  });

  it('keeps printable words as they are, and escapes the rest by UTF-16 unit', () => {
    for (const word of ['compute.g2.4', 'org:org_42', 'ana@example.com', '0.0610', 'é价💶']) {
      expect(escapeWord(word)).toBe(word);
    }
    expect(escapeWord('compute.g2.4\u001b[2K\rcompute.g2.8  list')).toBe(
      'compute.g2.4\\u001b[2K\\u000dcompute.g2.8\\u0020\\u0020list',
    );
    expect(escapeWord('a\u202eb\u2028c\u0085d\\u202e')).toBe('a\\u202eb\\u2028c\\u0085d\\\\u202e');
    expect(escapeWord('\u{f0000}\ud800')).toBe('\\udb80\\udc00\\ud800');
    expect(escapeWord('')).toBe('""'); // still a word
  });

  it('costs time in proportion to its text', () => {
    expectLinearTime(escapeWord, (n) => repeated('a\u202e \\', n), undefined, LARGE_OUTPUT);
    expectLinearTime(escapeWord, (n) => repeated('\u{f0000}', n), undefined, LARGE_OUTPUT);
  });
});

describe('escapeJson', () => {
  it('gives JSON that reads back as the same value, with nothing raw a terminal acts on or hides', () => {
    fc.assert(
      fc.property(fc.array(anyText, { maxLength: 3 }), (values) => {
        const json = escapeJson(JSON.stringify({ values }, null, 2));
        expect(JSON.parse(json)).toEqual({ values });
        expect(json.replaceAll('\n', '')).not.toMatch(RAW); // line breaks between tokens
      }),
    );
  });

  it('escapes U+2028, U+2029, C1 and bidirectional controls, which JSON.stringify leaves raw', () => {
    expect(escapeJson(JSON.stringify('a\u2028b\u2029c\u0085d\u202ee\u2066f\u061cg\u200fh'))).toBe(
      '"a\\u2028b\\u2029c\\u0085d\\u202ee\\u2066f\\u061cg\\u200fh"',
    );
  });

  it('costs time in proportion to its text', () => {
    expectLinearTime(escapeJson, (n) => repeated('"a\u2028\\', n), undefined, LARGE_OUTPUT);
  });
});

describe('escapeUnprintable', () => {
  it('leaves nothing a terminal acts on or hides', () => {
    fc.assert(fc.property(anyText, (text) => expect(escapeUnprintable(text)).not.toMatch(RAW)));
    expectLinearTime(escapeUnprintable, (n) => repeated('a\n\u202e', n), undefined, LARGE_OUTPUT);
  });
});

describe('hasUnprintable', () => {
  it('says whether escapeUnprintable would change the text', () => {
    fc.assert(fc.property(anyText, (text) => expect(hasUnprintable(text)).toBe(escapeUnprintable(text) !== text)));
  });
});
