import fc from 'fast-check';
import { expectConstantTime, expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { isPriceListResource, isSaneRequestId } from './request-logging';

// X-Request-Id is text any client chooses; a sane one is echoed and logged.
describe('isSaneRequestId, on any X-Request-Id', () => {
  it('never throws, and keeps only plain tokens of at most 128 characters', () => {
    fc.assert(
      fc.property(fc.oneof(outsideText(['a', '.', '-']), fc.array(fc.string())), (given) => {
        if (isSaneRequestId(given)) expect(given).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
      }),
    );
  });

  it('keeps every plain token', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9._-]{1,128}$/), (id) => expect(isSaneRequestId(id)).toBe(true)),
    );
  });

  // Every path of the check: a run of token characters (what a pattern without a length bound
  // reads to its end), a mix of them, a near-valid token spoilt at its end or at its start,
  // characters no token has, text that is not ASCII.
  it.each([
    ['token characters', (n: number) => repeated('a', n)],
    ['every kind of token character', (n: number) => repeated('aZ9._-', n)],
    ['a token spoilt by its last character', (n: number) => `${repeated('a.b-c_9', n - 1)} `],
    ['a token spoilt by its first character', (n: number) => ` ${repeated('a.b-c_9', n - 1)}`],
    ['a token with a space every 128 characters', (n: number) => repeated(`${repeated('a', 127)} `, n)],
    ['JSON', (n: number) => repeated('{"level":"error"},', n)],
    ['line breaks and tabs', (n: number) => repeated('a\r\n\t', n)],
    ['text beyond ASCII', (n: number) => repeated('é\u202e', n)],
  ])('costs the same on a header of 16 KB as of 2 KB: %s', (_shape, inputOfLength) => {
    expectConstantTime(isSaneRequestId, inputOfLength);
  });
});

// Which requests are logged and get a request id is decided on the routed path, text any client chooses.
describe('isPriceListResource, on any path', () => {
  /** What Express routes to the price list's controller: its three paths, any case, one trailing slash. */
  const ROUTED = /^\/v1\/pricing(?:\/changes|\/at\/[^/]+)?\/?$/i;

  it('never throws, and agrees with the routes of the price list', () => {
    fc.assert(
      fc.property(outsideText(['/v1/pricing', '/at/', '/changes', '/', 'x']), (path) => {
        expect(isPriceListResource(path)).toBe(ROUTED.test(path));
      }),
    );
  });

  it.each([
    ['a long instant', (n: number) => `/v1/pricing/at/${repeated('9', n)}`],
    ['a long instant with a slash at its end', (n: number) => `/v1/pricing/at/${repeated('9', n - 1)}/`],
    ['slashes', (n: number) => `/v1/pricing/at/${repeated('/', n)}`],
    ['another path', (n: number) => repeated('/v1/volumes', n)],
  ])('costs time at most in proportion to the path: %s', (_shape, inputOfLength) => {
    expectLinearTime(isPriceListResource, inputOfLength);
  });
});
