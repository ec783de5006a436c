import { formatHttpDate, formatInstant, formatMicros, isoString, parseHttpDate, parseInstant } from './instant';

describe('formatInstant', () => {
  it('is RFC 3339 in UTC, with milliseconds only when there are any', () => {
    expect(formatInstant(new Date('2027-01-01T00:00:00Z'))).toBe('2027-01-01T00:00:00Z');
    expect(formatInstant(new Date('2027-01-01T00:00:00.120Z'))).toBe('2027-01-01T00:00:00.120Z');
  });

  it('gives every number, never a RangeError: PostgreSQL’s infinities, and years beyond a Date’s range in full', () => {
    expect(formatInstant(Infinity)).toBe('infinity');
    expect(formatInstant(-Infinity)).toBe('-infinity');
    expect(formatInstant(8.64e15)).toBe('+275760-09-13T00:00:00Z'); // a Date's last instant
    expect(formatInstant(8.64e15 + 1)).toBe('+275760-09-13T00:00:00.001Z');
    // PostgreSQL's last instant, 294276-12-31T23:59:59.999999Z, as a float8 of epoch ms (2 ms apart there).
    expect(formatInstant(9_224_318_015_999_998)).toBe('+294276-12-31T23:59:59.998Z');
    expect(formatInstant(-8.64e15 - 86_400_000)).toBe('-271821-04-19T00:00:00Z');
    expect(isoString(Date.parse('2027-01-01T00:00:00Z'))).toBe('2027-01-01T00:00:00.000Z');
  });
});

describe('formatMicros', () => {
  it('reads epoch microseconds exactly, cut to the millisecond, and PostgreSQL’s infinities', () => {
    expect(formatMicros('1798761600000000')).toBe('2027-01-01T00:00:00Z');
    expect(formatMicros('1798761600120999')).toBe('2027-01-01T00:00:00.120Z');
    expect(formatMicros('1798761600000000', 'iso')).toBe('2027-01-01T00:00:00.000Z');
    expect(formatMicros('-1')).toBe('1969-12-31T23:59:59.999Z');
    expect(formatMicros('9224318015999999999')).toBe('+294276-12-31T23:59:59.999Z');
    expect(formatMicros('-210866803200000000')).toBe('-004713-11-24T00:00:00Z'); // PostgreSQL's first day
    expect(formatMicros('infinity')).toBe('infinity');
    expect(formatMicros('-infinity')).toBe('-infinity');
  });

  it('says undefined of anything else', () => {
    for (const text of ['', 'Infinity', '1.5', '1e6', ' 1', '+1', '1'.repeat(31), '2027-01-01T00:00:00Z']) {
      expect(formatMicros(text)).toBeUndefined();
    }
  });
});

describe('formatHttpDate', () => {
  it('is an IMF-fixdate', () => {
    expect(formatHttpDate(new Date('2026-11-21T19:11:49.900Z'))).toBe('Sat, 21 Nov 2026 19:11:49 GMT');
  });
});

describe('parseInstant', () => {
  it.each([
    ['2027-01-01T00:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['2027-01-01T01:00:00+01:00', '2027-01-01T00:00:00.000Z'],
    ['2026-12-31T19:00:00-05:00', '2027-01-01T00:00:00.000Z'],
    ['2027-01-01t00:00:00.5z', '2027-01-01T00:00:00.500Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['0000-02-29T00:00:00Z', '0000-02-29T00:00:00.000Z'], // year 0 is a leap year; Date.UTC would take it as 1900
  ])('reads %s', (text, iso) => {
    expect(parseInstant(text)?.toISOString()).toBe(iso);
  });

  it.each([
    '2027-01-01T00:00:00', // no offset
    '2027-01-01',
    '2027-01-01 00:00:00Z',
    '2027-02-30T00:00:00Z',
    '2027-02-29T00:00:00Z',
    '2027-13-01T00:00:00Z',
    '2027-01-01T24:00:00Z',
    '2027-01-01T00:00:00.1234Z', // finer than milliseconds
    '2027-01-01T00:00:00+24:00',
    'tomorrow',
  ])('refuses %s', (text) => {
    expect(parseInstant(text)).toBeUndefined();
  });
});

describe('parseInstant and a leap second (docs/decisions.md, "Leap seconds")', () => {
  const asked = { cutFraction: true, leapSecond: true };

  it.each([
    ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59.999Z'],
    ['2016-12-31T23:59:60.5Z', '2016-12-31T23:59:59.999Z'],
    ['2016-12-31T23:59:60.999999Z', '2016-12-31T23:59:59.999Z'],
    ['2015-06-30t23:59:60z', '2015-06-30T23:59:59.999Z'],
    ['2017-01-01T00:59:60+01:00', '2016-12-31T23:59:59.999Z'], // its local equivalent (RFC 3339 5.7)
    ['2016-12-31T18:59:60-05:00', '2016-12-31T23:59:59.999Z'],
    ['2017-01-01T05:29:60+05:30', '2016-12-31T23:59:59.999Z'],
  ])('asked about the list, reads %s as the last millisecond before the next UTC day', (text, iso) => {
    expect(parseInstant(text, asked)?.toISOString()).toBe(iso);
  });

  it.each([
    '2016-12-31T23:58:60Z', // not the last minute of a UTC day
    '2016-12-31T22:59:60Z',
    '2016-12-31T23:59:60+01:00', // 22:59:60 UTC
    '2016-12-31T23:59:61Z',
    '2016-12-31T23:59:99Z',
  ])('refuses %s, which no UTC day has', (text) => {
    expect(parseInstant(text, asked)).toBeUndefined();
  });

  it('refuses a leap second where the instant is stored (the default): it would be stored as another', () => {
    expect(parseInstant('2016-12-31T23:59:60Z')).toBeUndefined();
    expect(parseInstant('2016-12-31T23:59:60Z', { cutFraction: true })).toBeUndefined();
    expect(parseInstant('2016-12-31T23:59:59.999Z')?.toISOString()).toBe('2016-12-31T23:59:59.999Z');
  });
});

describe('parseHttpDate', () => {
  const now = new Date('2026-11-22T12:00:00Z');
  const at = (iso: string): number => Date.parse(iso);

  // The three forms RFC 9110 (section 5.6.7) gives for one instant.
  it.each([
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT'],
    ['RFC 850', 'Sunday, 06-Nov-94 08:49:37 GMT'],
    ['asctime', 'Sun Nov  6 08:49:37 1994'],
  ])('reads %s', (_form, text) => {
    expect(parseHttpDate(text, now)).toBe(at('1994-11-06T08:49:37Z'));
  });

  it.each([
    ['asctime, two-digit day', 'Fri Mar 01 08:30:00 2030', '2030-03-01T08:30:00Z'],
    ['a leap second', 'Sat, 31 Dec 2016 23:59:60 GMT', '2016-12-31T23:59:59Z'],
    ['a year before 100, not taken as 19xx', 'Sat, 01 Jan 0050 00:00:00 GMT', '0050-01-01T00:00:00Z'],
  ])('reads %s', (_form, text, iso) => {
    expect(parseHttpDate(text, now)).toBe(at(iso));
  });

  it('takes a two-digit year more than 50 years ahead as the most recent past one', () => {
    expect(parseHttpDate('Monday, 01-Jan-76 00:00:00 GMT', now)).toBe(at('2076-01-01T00:00:00Z'));
    expect(parseHttpDate('Tuesday, 01-Jan-77 00:00:00 GMT', now)).toBe(at('1977-01-01T00:00:00Z'));
  });

  it.each([
    ['empty', ''],
    ['ISO 8601', '2026-11-22T12:00:00Z'],
    ['no zone', 'Sun, 06 Nov 1994 08:49:37'],
    ['another zone', 'Sun, 06 Nov 1994 08:49:37 UTC'],
    ['lower case', 'sun, 06 nov 1994 08:49:37 gmt'],
    ['two dates', 'Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT'],
    ['a day that does not exist', 'Thu, 31 Apr 2025 00:00:00 GMT'],
    ['hour 24', 'Sun, 06 Nov 1994 24:00:00 GMT'],
    ['spaces around', ' Sun, 06 Nov 1994 08:49:37 GMT'],
  ])('refuses %s', (_what, text) => {
    expect(parseHttpDate(text, now)).toBeUndefined();
  });
});
