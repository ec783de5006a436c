import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { actorProblem, MAX_REASON_LENGTH, reasonProblem } from './author';

// --actor, PRICING_ACTOR and --reason are whatever an operator (or a script) passes.

const ACTOR_CHARACTERS = [...'ABCXYZabcxyz0189._@+-'];
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

describe('an actor', () => {
  it('is accepted exactly when it is 1 to 100 of A-Z a-z 0-9 . _ @ + -', () => {
    fc.assert(
      fc.property(outsideText(ACTOR_CHARACTERS), (text) => {
        expect(actorProblem(text) === undefined).toBe(/^[A-Za-z0-9._@+-]{1,100}$/.test(text));
      }),
    );
  });

  it('takes an e-mail address and a user name, and refuses spaces, quotes and the empty text', () => {
    expect(actorProblem('ana.lima+pricing@example.com')).toBeUndefined();
    expect(actorProblem('root')).toBeUndefined();
    for (const bad of ['', 'Ana Lima', '"root"', 'root\n', 'x'.repeat(101), 'josé']) {
      expect(actorProblem(bad)).toMatch(/^an actor is 1 to 100 letters/);
    }
  });
});

describe('a reason', () => {
  it('is accepted exactly when it is 1 to 500 code points, not blank, none of them unprintable (private use and unassigned included)', () => {
    fc.assert(
      fc.property(outsideText(UNPRINTABLE), (text) => {
        const printable = !/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}]/u.test(text);
        const fits = [...text].length <= MAX_REASON_LENGTH && text.trim() !== '';
        expect(reasonProblem(text) === undefined).toBe(printable && fits);
      }),
    );
  });

  it('counts characters, not UTF-16 units: 500 emoji fit, 501 do not', () => {
    expect(reasonProblem('💶'.repeat(500))).toBeUndefined();
    expect(reasonProblem('💶'.repeat(501))).toBe('a reason has at most 500 characters');
    expect(reasonProblem('Q3 list-price review, ticket PRC-1234 ("storage")')).toBeUndefined();
  });

  it('refuses a line break, a bidirectional override and blank text', () => {
    expect(reasonProblem('one\ntwo')).toBe('a reason is one line of printable characters');
    expect(reasonProblem('price \u202eesaercni')).toBe('a reason is one line of printable characters');
    expect(reasonProblem('   ')).toBe('a reason, when given, is not empty');
  });

  it('costs time in proportion to its text', () => {
    for (const problem of [reasonProblem, actorProblem]) {
      expectLinearTime(problem, (n) => repeated('a', n));
    }
  });
});
