import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { isSaneRequestId } from './request-logging';

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

  it('costs the same whatever the length of the header', () => {
    expectLinearTime(isSaneRequestId, (n) => repeated('a', n));
  });
});
