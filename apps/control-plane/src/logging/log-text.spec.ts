import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { boundLogLine, cutText, loggedUrl, MAX_LOG_LINE_BYTES, MAX_LOGGED_URL, redactSecrets } from './log-text';
import { anyCodePoint } from '../../../../test/support/outside-text';

describe('redactSecrets', () => {
  it.each([
    ['postgres://postgres:s3cr%2Ft@127.0.0.1:5432/db', 'postgres://postgres:[redacted]@127.0.0.1:5432/db'],
    ['connect to postgresql://u:p@db/x failed', 'connect to postgresql://u:[redacted]@db/x failed'],
    ['redis://:hunter2@cache:6379', 'redis://:[redacted]@cache:6379'],
    ['redis://:pa/ss:w@cache:6379', 'redis://:[redacted]@cache:6379'],
    ['two: a://u:p1@h and b://v:p2@k', 'two: a://u:[redacted]@h and b://v:[redacted]@k'],
    ['Authorization: Bearer abc.def-ghi', 'Authorization: Bearer [redacted]'],
    ['bearer\ttok, BEARER "x"', 'bearer\t[redacted], BEARER "x"'],
    ['unbearer tok', 'unbearer tok'],
    ['postgres://postgres@127.0.0.1/db (no password)', 'postgres://postgres@127.0.0.1/db (no password)'],
    ['listening on http://0.0.0.0:3000', 'listening on http://0.0.0.0:3000'],
    ['İİ Bearer tok', 'İİ Bearer [redacted]'],
  ])('%s', (text, expected) => {
    expect(redactSecrets(text)).toBe(expected);
  });

  it('never throws, and never leaves a password it was shown', () => {
    fc.assert(
      fc.property(fc.string({ unit: anyCodePoint }), fc.stringMatching(/^[A-Za-z0-9]{1,20}$/), (text, password) => {
        expect(typeof redactSecrets(text)).toBe('string');
        expect(redactSecrets(`${text} postgres://app:${password}@db/x`)).not.toContain(`:${password}@`);
      }),
    );
  });

  it.each([
    ['dotted runs (what the old pattern backtracked on)', 'a.'],
    ['schemes without a password', 'a://b'],
    ['schemes with a colon and no @', 'x://u:'],
    ['bearer without a token', 'Bearer '],
    ['bearer glued to words', 'xbearer'],
  ])('is linear in its input: %s', (_what, unit) => {
    expectLinearTime(redactSecrets, (n) => repeated(unit, n));
  });
});

describe('loggedUrl', () => {
  it('keeps a URL of 1,024 characters, cuts a longer one and says how long it was', () => {
    const url = `/${'a'.repeat(MAX_LOGGED_URL - 1)}`;
    expect(loggedUrl(url)).toBe(url);
    expect(loggedUrl(`${url}bcd`)).toBe(`${url}…[cut: 1027 characters in all]`);
    expect(cutText('', 3)).toBe('');
  });
});

describe('boundLogLine', () => {
  const line = (fields: Record<string, unknown>): string => `${JSON.stringify(fields)}\n`;

  it('leaves a line within 4 KB as it is', () => {
    const short = line({ level: 'info', msg: 'x'.repeat(1000) });
    expect(boundLogLine(short)).toBe(short);
  });

  it('cuts the long fields of a longer line, which stays JSON, marked truncated', () => {
    const long = line({ level: 'info', context: 'HTTP', req: { url: `/${'a'.repeat(14_000)}` }, msg: 'GET' });
    const bounded = boundLogLine(long);
    expect(Buffer.byteLength(bounded)).toBeLessThanOrEqual(MAX_LOG_LINE_BYTES);
    expect(bounded.endsWith('\n')).toBe(true);
    expect(JSON.parse(bounded)).toMatchObject({ level: 'info', context: 'HTTP', msg: 'GET', truncated: true });
  });

  it('keeps level, time, context and the start of the message when cutting fields is not enough', () => {
    const many = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`field${i}`, 'y'.repeat(200)]));
    const bounded = boundLogLine(line({ level: 'warn', time: 't', context: 'C', msg: 'm', ...many }));
    expect(Buffer.byteLength(bounded)).toBeLessThanOrEqual(MAX_LOG_LINE_BYTES);
    expect(JSON.parse(bounded)).toEqual({ level: 'warn', time: 't', context: 'C', msg: 'm', truncated: true });
  });

  it('bounds whatever it is given, multi-byte text and non-JSON included', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: anyCodePoint, maxLength: 20_000 }),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        fc.integer({ min: 0, max: 6000 }),
        (text, pad) => {
          const bounded = boundLogLine(`${text}${'é'.repeat(pad)}\n`);
          expect(Buffer.byteLength(bounded)).toBeLessThanOrEqual(MAX_LOG_LINE_BYTES);
        },
      ),
      { numRuns: 200 },
    );
  });
});
