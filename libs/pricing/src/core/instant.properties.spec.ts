import fc from 'fast-check';
import { expectLinearTime, repeated } from '../../../../test/support/linear-time';
import { outsideText } from '../../../../test/support/outside-text';
import { formatHttpDate, formatInstant, formatMicros, parseHttpDate, parseInstant } from './instant';

// Timestamps come from price books and the CLI's arguments (parseInstant) and from
// If-Modified-Since (parseHttpDate).

const NOW = new Date('2026-11-22T12:00:00Z');
const FIRST = new Date('0000-01-01T00:00:00.000Z');
const LAST = new Date('9999-12-31T23:59:59.999Z');
const anyInstant = fc.date({ min: FIRST, max: LAST, noInvalidDate: true });
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Epoch milliseconds of a UTC date and time, years 0 to 99 included (Date.UTC maps those to 19xx). */
function utc(year: number, month: number, day: number, hour: number, minute: number, second: number, ms = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}

const RFC3339_SHAPE = /^\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d{1,3})?([Zz]|[+-]\d\d:\d\d)$/;
const HTTP_DATE_SHAPE =
  /^(?:[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT|[A-Z][a-z]+day, \d\d-[A-Z][a-z]{2}-\d\d \d\d:\d\d:\d\d GMT|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})$/;

describe('instants read from the database', () => {
  // A stored row may hold any instant PostgreSQL holds (4713 BC to 294276, infinity), and a
  // hand-written change-log entry any text where an instant belongs.
  it('formatInstant gives any number a text, and formatMicros any text a text or undefined, never throwing', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer({ min: -9.3e15, max: 9.3e15 })), (ms) => {
        expect(typeof formatInstant(ms)).toBe('string');
      }),
    );
    fc.assert(
      fc.property(fc.oneof(outsideText(['0', '9', '-', 'infinity']), fc.bigInt().map(String)), (text) =>
        expect(['string', 'undefined']).toContain(typeof formatMicros(text)),
      ),
    );
  });

  it("formatInstant writes what a Date's toISOString writes, without zero milliseconds", () => {
    const reference = (ms: number) => new Date(Math.floor(ms)).toISOString().replace(/\.000Z$/, 'Z');
    const years = fc.integer({ min: -62_167_219_200_000 - 1000, max: 253_402_300_800_000 + 1000 });
    // Whole seconds and days, as prices mostly start: the calendar's edges (a century, a leap day).
    const wholeDays = fc.integer({ min: -719_528 - 1, max: 2_932_897 + 1 }).map((day) => day * 86_400_000);
    fc.assert(
      fc.property(
        fc.oneof(
          years,
          years.map((ms) => ms - (ms % 1000)),
          wholeDays,
          fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true }),
        ),
        (ms) => {
          expect(formatInstant(ms)).toBe(reference(ms));
          expect(formatInstant(new Date(Math.floor(ms)))).toBe(reference(ms));
        },
      ),
      { numRuns: 20_000 },
    );
    for (const ms of [
      -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999, 253_402_300_800_000, 951_782_400_000, -1, 0.5,
      -0.5,
    ])
      expect(formatInstant(ms)).toBe(reference(ms));
  });

  it('formatMicros agrees with formatInstant wherever a Date holds the instant', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.integer({ min: 0, max: 999 }), (ms, micros) => {
        expect(formatMicros(`${BigInt(ms) * 1000n + BigInt(micros)}`)).toBe(formatInstant(ms));
      }),
    );
  });

  it('formatMicros costs time in proportion to its text', () => {
    expectLinearTime(
      (text) => formatMicros(text),
      (n) => repeated('9', n),
    );
  });
});

describe('parseInstant on any text', () => {
  it('never throws, and accepts only RFC 3339 timestamps with an offset and at most milliseconds', () => {
    fc.assert(
      fc.property(outsideText(['2027-01-01T00:00:00Z', '0', '9', '-', ':', '.1', 'T', 'Z', '+01:00']), (text) => {
        const instant = parseInstant(text);
        if (instant) {
          expect(text).toMatch(RFC3339_SHAPE);
          expect(Number.isNaN(instant.getTime())).toBe(false);
        }
      }),
    );
  });

  it('reads back every instant of years 0000 to 9999 that formatInstant writes', () => {
    fc.assert(
      fc.property(anyInstant, (instant) => {
        expect(parseInstant(formatInstant(instant))?.getTime()).toBe(instant.getTime());
      }),
    );
  });

  it('reads a generated timestamp with any offset, in either case, as the instant it denotes', () => {
    const timestamp = fc.record({
      year: fc.integer({ min: 0, max: 9999 }),
      month: fc.integer({ min: 1, max: 12 }),
      day: fc.integer({ min: 1, max: 28 }),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      second: fc.integer({ min: 0, max: 59 }),
      fraction: fc.option(fc.stringMatching(/^\d{1,3}$/), { nil: undefined }),
      offset: fc.option(
        fc.tuple(fc.constantFrom(1, -1), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })),
        {
          nil: undefined,
        },
      ),
      lower: fc.boolean(),
    });
    fc.assert(
      fc.property(timestamp, (t) => {
        const zone = t.offset ? `${t.offset[0] > 0 ? '+' : '-'}${pad(t.offset[1])}:${pad(t.offset[2])}` : 'Z';
        const fraction = t.fraction === undefined ? '' : `.${t.fraction}`;
        let text = `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}${fraction}${zone}`;
        if (t.lower) text = text.toLowerCase();
        const ms = t.fraction === undefined ? 0 : Number(t.fraction.padEnd(3, '0'));
        const offsetMs = t.offset ? t.offset[0] * (t.offset[1] * 60 + t.offset[2]) * 60_000 : 0;
        const expected = utc(t.year, t.month, t.day, t.hour, t.minute, t.second, ms) - offsetMs;
        expect(parseInstant(text)?.getTime()).toBe(expected);
        // Finer than milliseconds is refused, never rounded; so is a missing offset.
        expect(parseInstant(text.replace(/(:\d\d)(\.\d+)?([zZ+-])/, '$1.0001$3'))).toBeUndefined();
        expect(parseInstant(text.replace(/([zZ]|[+-]\d\d:\d\d)$/, ''))).toBeUndefined();
      }),
    );
  });
});

describe('parseHttpDate on any text', () => {
  const weekday = (ms: number) => new Date(ms).toUTCString().slice(0, 3);
  const longDay: Record<string, string> = {
    Mon: 'Monday',
    Tue: 'Tuesday',
    Wed: 'Wednesday',
    Thu: 'Thursday',
    Fri: 'Friday',
    Sat: 'Saturday',
    Sun: 'Sunday',
  };

  it('never throws, and gives whole seconds for HTTP-dates only', () => {
    fc.assert(
      fc.property(outsideText(['Sun, ', 'Sunday, ', ' ', '06 Nov 1994 ', '08:49:37', ' GMT', '-Nov-', '0']), (text) => {
        const ms = parseHttpDate(text, NOW);
        if (ms !== undefined) {
          expect(text).toMatch(HTTP_DATE_SHAPE);
          expect(Number.isInteger(ms / 1000)).toBe(true);
        }
      }),
    );
  });

  it('reads back the second of every instant of years 0000 to 9999 that formatHttpDate writes', () => {
    fc.assert(
      fc.property(anyInstant, (instant) => {
        const second = Math.floor(instant.getTime() / 1000) * 1000;
        expect(parseHttpDate(formatHttpDate(instant), NOW)).toBe(second);
      }),
    );
  });

  it('reads the asctime and RFC 850 forms of an instant as that instant (RFC 850 within 49 years of now)', () => {
    const near = fc.date({
      min: new Date(NOW.getTime() - 49 * 365 * 86_400_000),
      max: new Date(NOW.getTime() + 49 * 365 * 86_400_000),
      noInvalidDate: true,
    });
    fc.assert(
      fc.property(near, (instant) => {
        const ms = Math.floor(instant.getTime() / 1000) * 1000;
        const [, day, month, year, time] = formatHttpDate(instant).split(' ');
        const asctime = `${weekday(ms)} ${month} ${String(Number(day)).padStart(2, ' ')} ${time} ${year}`;
        const rfc850 = `${longDay[weekday(ms)]}, ${day}-${month}-${year.slice(2)} ${time} GMT`;
        expect(parseHttpDate(asctime, NOW)).toBe(ms);
        expect(parseHttpDate(rfc850, NOW)).toBe(ms);
      }),
    );
  });
});

describe('parseInstant with cutFraction (an instant in a URL)', () => {
  it('never throws, and accepts only RFC 3339 timestamps with an offset', () => {
    fc.assert(
      fc.property(outsideText(['2027-01-01T00:00:00Z', '0', '9', '-', ':', '.123456', 'T', 'Z', '+01:00']), (text) => {
        const instant = parseInstant(text, { cutFraction: true });
        if (instant) {
          expect(text).toMatch(/^\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/);
          expect(Number.isNaN(instant.getTime())).toBe(false);
        }
      }),
    );
  });

  it('reads any fraction as its milliseconds, the digits beyond cut (never rounded)', () => {
    fc.assert(
      fc.property(anyInstant, fc.stringMatching(/^\d{0,30}$/), (instant, extra) => {
        const text = formatInstant(instant).replace(
          /(\.\d{3})?Z$/,
          (_, ms: string | undefined) => `${ms ?? '.000'}${extra}Z`,
        );
        expect(parseInstant(text, { cutFraction: true })?.getTime()).toBe(instant.getTime());
        expect(parseInstant(`${text.slice(0, -1)}+01:00`, { cutFraction: true })?.getTime()).toBe(
          instant.getTime() - 3_600_000,
        );
      }),
    );
    expect(parseInstant('2026-03-01T01:00:00.250999+01:00', { cutFraction: true })?.toISOString()).toBe(
      '2026-03-01T00:00:00.250Z',
    );
    expect(parseInstant('2026-03-01T00:00:00.250999Z')).toBeUndefined();
  });
});

describe('parseInstant with leapSecond (an instant that asks about the list)', () => {
  const asked = { cutFraction: true, leapSecond: true };

  it('never throws; reads what it reads without leapSecond the same, and a :60 only at 23:59 UTC, as 23:59:59.999', () => {
    fc.assert(
      fc.property(
        outsideText(['2016-12-31T23:59:60Z', '23:59:60', '60', ':', '.5', 'Z', '+01:00', '-05:00']),
        (text) => {
          const instant = parseInstant(text, asked);
          const plain = parseInstant(text, { cutFraction: true });
          if (plain) expect(instant?.getTime()).toBe(plain.getTime());
          else if (instant) {
            expect(text).toMatch(/^\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:60(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/);
            expect(instant.toISOString()).toMatch(/T23:59:59\.999Z$/);
          }
        },
      ),
    );
  });

  it('reads the leap second of any day at any offset as the millisecond before the next UTC day, after every instant of 23:59:59', () => {
    const offset = fc.tuple(fc.constantFrom(1, -1), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }));
    const day = fc.date({
      min: new Date('0001-01-02T00:00:00Z'),
      max: new Date('9998-12-30T00:00:00Z'),
      noInvalidDate: true,
    });
    fc.assert(
      fc.property(
        day,
        fc.option(offset, { nil: undefined }),
        fc.stringMatching(/^(\.\d{1,9})?$/),
        (date, zone, fraction) => {
          const midnight = Math.floor(date.getTime() / 86_400_000) * 86_400_000 + 86_400_000; // the next UTC day
          const offsetMs = zone ? zone[0] * (zone[1] * 60 + zone[2]) * 60_000 : 0;
          // 23:59 UTC, written in the offset's local time.
          const local = new Date(midnight - 60_000 + offsetMs).toISOString().slice(0, 16);
          const suffix = zone ? `${zone[0] > 0 ? '+' : '-'}${pad(zone[1])}:${pad(zone[2])}` : 'Z';
          const text = `${local}:60${fraction}${suffix}`;
          expect(parseInstant(text, asked)?.getTime()).toBe(midnight - 1);
          expect(parseInstant(text)).toBeUndefined();
          // Any other minute has no second 60.
          const other = new Date(midnight - 120_000 + offsetMs).toISOString().slice(0, 16);
          expect(parseInstant(`${other}:60${fraction}${suffix}`, asked)).toBeUndefined();
        },
      ),
    );
  });

  it.each<[string, (n: number) => string]>([
    ['a long fraction of a leap second', (n) => `2016-12-31T23:59:60.${repeated('9', n)}Z`],
    ['a long fraction, no offset', (n) => `2016-12-31T23:59:60.${repeated('9', n)}`],
  ])('costs time in proportion to its text: %s', (_what, inputOfLength) => {
    expectLinearTime((text) => parseInstant(text, asked), inputOfLength);
  });
});

describe('parseInstant and parseHttpDate: linear time on 16 KB', () => {
  it.each<[string, (n: number) => string]>([
    ['digits', (n) => repeated('1', n)],
    ['a timestamp followed by fractions', (n) => `2027-01-01T00:00:00${repeated('.1', n)}`],
    ['a timestamp with a long fraction', (n) => `2027-01-01T00:00:00.${repeated('1', n)}Z`],
    ['timestamps repeated', (n) => repeated('2027-01-01T00:00:00Z', n)],
    ['dashes and colons', (n) => repeated('-:', n)],
  ])('parseInstant: %s', (_what, inputOfLength) => {
    expectLinearTime(parseInstant, inputOfLength);
    expectLinearTime((text) => parseInstant(text, { cutFraction: true }), inputOfLength);
  });

  it.each<[string, (n: number) => string]>([
    ['day names', (n) => repeated('Sun, ', n)],
    ['long day names', (n) => repeated('Sunday, ', n)],
    ['spaces after a date', (n) => `Sun, 06 Nov 1994 08:49:37 GMT${repeated(' ', n)}`],
    ['spaces', (n) => repeated(' ', n)],
    ['digits', (n) => repeated('0', n)],
    ['dates repeated, as a list', (n) => repeated('Sun, 06 Nov 1994 08:49:37 GMT, ', n)],
    ['an asctime date with a long year', (n) => `Sun Nov  6 08:49:37 ${repeated('1', n)}`],
  ])('parseHttpDate: %s', (_what, inputOfLength) => {
    expectLinearTime((text) => parseHttpDate(text, NOW), inputOfLength);
  });
});
