import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../test/support/linear-time';
import { outsideText } from '../../../test/support/outside-text';
import { bearerToken } from './bearer-token';

// The Authorization header is text any client chooses, on every authenticated route.
describe('bearerToken, on any Authorization header', () => {
  it('never throws; a token it finds has no space and came from the header', () => {
    fc.assert(
      fc.property(outsideText(['Bearer ', ' ', 'Bearer', '\t']), (header) => {
        const token = bearerToken(header);
        if (token !== undefined) {
          expect(token).not.toMatch(/\s/);
          expect(header.endsWith(token)).toBe(true);
        }
      }),
    );
  });

  it('finds every token of the form it takes, in any case of the scheme', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('Bearer', 'bearer', 'BEARER'),
        fc.stringMatching(/^[A-Za-z0-9._~+/=-]{1,200}$/),
        (scheme, token) => {
          expect(bearerToken(`${scheme} ${token}`)).toBe(token);
          expect(bearerToken(`${scheme}  ${token}`)).toBeUndefined();
          expect(bearerToken([`${scheme} ${token}`])).toBeUndefined();
        },
      ),
    );
  });

  it.each([
    ['a long token', 'a'],
    ['spaces after the scheme', ' '],
    ['a long token with a space at the end', 'ab'],
  ])('is linear in the header: %s', (_what, unit) => {
    expectLinearTime(bearerToken, (n) => `Bearer ${repeated(unit, n)} x`);
  });
});
