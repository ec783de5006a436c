import { formatHttpDate, formatInstant, parseInstant } from './instant';

describe('formatInstant', () => {
  it('is RFC 3339 in UTC, with milliseconds only when there are any', () => {
    expect(formatInstant(new Date('2027-01-01T00:00:00Z'))).toBe('2027-01-01T00:00:00Z');
    expect(formatInstant(new Date('2027-01-01T00:00:00.120Z'))).toBe('2027-01-01T00:00:00.120Z');
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
