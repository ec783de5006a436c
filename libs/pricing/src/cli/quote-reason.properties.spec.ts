import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { anyCodePoint, outsideText } from '../../../../test/support/outside-text';
import { quoteReason } from './format-history';

// A reason is whatever an operator (or a script, or a row written by hand) stored.

const UNPRINTABLE = [
  '\n',
  '\r',
  '\t',
  '\u0000',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u202e',
  '\u200b',
  '\u2028',
  '\ufeff',
  '\ud800',
  '\ue000', // private use
  '\u0378', // unassigned
];

describe('a reason as printed', () => {
  it('is a JSON string of the reason with nothing unprintable left in it, whatever the reason', () => {
    fc.assert(
      fc.property(fc.oneof(outsideText(UNPRINTABLE), fc.string({ unit: anyCodePoint })), (reason) => {
        const quoted = quoteReason(reason);
        expect(JSON.parse(quoted)).toBe(reason);
        expect(quoted).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/u);
      }),
    );
    expect(quoteReason('approved by cfo \u202e0001-CRP')).toBe('"approved by cfo \\u202e0001-CRP"');
  });

  it('is quoted in linear time', () => {
    expectLinearTime(quoteReason, (n) => repeated('a\u202e"', n));
  });
});
