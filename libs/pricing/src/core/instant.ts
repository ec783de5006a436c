/**
 * RFC 3339 in UTC with `Z`; milliseconds only when there are any. A number is epoch milliseconds.
 * Any number: one beyond a Date's range (a year past 275760, which PostgreSQL holds) has its year
 * in full, as toISOString writes years past 9999 (`+294276-12-31T23:59:59Z`), and an infinite
 * one is PostgreSQL's `infinity` or `-infinity`, never a RangeError.
 */
export function formatInstant(instant: Date | number): string {
  const ms = Math.floor(typeof instant === 'number' ? instant : instant.getTime());
  if (ms >= FOUR_DIGIT_YEARS_FROM && ms < FOUR_DIGIT_YEARS_UNTIL) return formatFourDigitYear(ms);
  return withoutZeroMilliseconds(isoString(ms));
}

/** 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z, epoch ms: the years toISOString writes with four digits. */
const FOUR_DIGIT_YEARS_FROM = -62_167_219_200_000;
const FOUR_DIGIT_YEARS_UNTIL = 253_402_300_800_000;
const DAY_MS = 86_400_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));

/**
 * formatInstant of whole epoch ms within years 0000–9999, by arithmetic (the civil date of a day
 * number: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms"): a third of the time of a Date
 * and its toISOString, and every entry of a list shows one or two instants.
 */
function formatFourDigitYear(ms: number): string {
  const days = Math.floor(ms / DAY_MS);
  let time = ms - days * DAY_MS;
  const z = days + 719_468; // days since 0000-03-01
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153); // from March
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const milliseconds = time % 1000;
  time = (time - milliseconds) / 1000;
  const seconds = time % 60;
  time = (time - seconds) / 60;
  const minutes = time % 60;
  const hours = (time - minutes) / 60;
  const text =
    `${TWO_DIGITS[Math.floor(year / 100)]}${TWO_DIGITS[year % 100]}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}` +
    `T${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}`;
  if (milliseconds === 0) return `${text}Z`;
  return `${text}.${String(milliseconds).padStart(3, '0')}Z`;
}

/** Date.prototype.toISOString's text (milliseconds always) of any epoch ms, as formatInstant reads them. */
export function isoString(ms: number): string {
  if (Number.isNaN(ms)) return 'NaN';
  if (!Number.isFinite(ms)) return ms > 0 ? 'infinity' : '-infinity';
  // A Date's range without a BigInt: the feed's chain formats every instant of the list's past.
  if (ms >= -DATE_LIMIT && ms <= DATE_LIMIT) return new Date(Math.floor(ms)).toISOString();
  return isoOf(BigInt(Math.floor(ms)));
}

/**
 * An instant given as epoch microseconds in decimal (as the change log holds instants), as
 * formatInstant writes it (`iso`: as isoString does), finer digits than milliseconds cut;
 * PostgreSQL's `infinity` and `-infinity` as they are. `undefined` for any other text.
 */
export function formatMicros(text: string, form: 'rfc3339' | 'iso' = 'rfc3339'): string | undefined {
  if (text === 'infinity' || text === '-infinity') return text;
  if (!MICROS.test(text)) return undefined;
  const micros = BigInt(text);
  const iso = isoOf(micros / 1000n - (micros % 1000n < 0n ? 1n : 0n));
  return form === 'iso' ? iso : withoutZeroMilliseconds(iso);
}

/** Epoch microseconds in decimal, of any length PostgreSQL's or a hand-written value could have. */
const MICROS = /^-?\d{1,30}$/;
/** The instants a Date holds: 100,000,000 days either side of the epoch. */
const DATE_LIMIT_MS = 8_640_000_000_000_000n;
const DATE_LIMIT = Number(DATE_LIMIT_MS);
/** 400 Gregorian years, epoch ms: the calendar repeats after them. */
const CYCLE_MS = 146_097n * 86_400_000n;

/** toISOString's text of an instant of epoch ms, beyond a Date's range too. */
function isoOf(ms: bigint): string {
  if (ms >= -DATE_LIMIT_MS && ms <= DATE_LIMIT_MS) return new Date(Number(ms)).toISOString();
  // Whole 400-year cycles into a Date's range (month, day and time stay), then the years put back.
  const cycles = ms > 0n ? (ms - DATE_LIMIT_MS) / CYCLE_MS + 1n : -((-ms - DATE_LIMIT_MS) / CYCLE_MS + 1n);
  const iso = new Date(Number(ms - cycles * CYCLE_MS)).toISOString();
  const yearEnd = iso.indexOf('-', 1);
  const year = BigInt(Number(iso.slice(0, yearEnd))) + cycles * 400n;
  const digits = String(year < 0n ? -year : year).padStart(6, '0');
  return `${year < 0n ? '-' : '+'}${digits}${iso.slice(yearEnd)}`;
}

function withoutZeroMilliseconds(iso: string): string {
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/** IMF-fixdate, as in `Last-Modified`. */
export function formatHttpDate(instant: Date): string {
  return instant.toUTCString();
}

/** RFC 3339 with an offset, any number of fraction digits (at most what its text can hold). */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 timestamp with an offset. Fractions are limited to milliseconds so that
 * no instant is silently rounded (`cutFraction`: digits beyond milliseconds are cut instead, as
 * for an instant in a URL). Returns `undefined` when the text is not such a timestamp.
 *
 * A leap second (`23:59:60` UTC, or its local equivalent: RFC 3339 5.6 and 5.7) names an instant
 * our clock, like POSIX's and JavaScript's, does not have. `leapSecond`: it is read as the last
 * millisecond before the next UTC day (23:59:59.999), the latest instant that precedes it, for
 * instants that ask about the list (what was served then, what changed since). Otherwise refused:
 * an instant to store would be stored as another than written (docs/decisions.md, "Leap seconds").
 */
export function parseInstant(text: string, { cutFraction = false, leapSecond = false } = {}): Date | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  if (m[7] !== undefined && m[7].length > 4) {
    if (!cutFraction) return undefined;
    text = text.replace(m[7], m[7].slice(0, 4));
  }
  const [, year, month, day, hour, minute, second] = m.map(Number);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return undefined;
  if (day > daysInMonth(year, month - 1)) return undefined;
  const offset = m[8].toUpperCase();
  if (offset !== 'Z' && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59)) return undefined;
  if (second === 60) {
    if (!leapSecond || !lastMinuteOfUtcDay(hour, minute, offset)) return undefined;
    text = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:59.999${offset}`;
  }
  const instant = new Date(text.toUpperCase());
  return Number.isNaN(instant.getTime()) ? undefined : instant;
}

/** Whether the local `hour:minute` at `offset` (`Z` or `±hh:mm`) is 23:59 UTC: the only minute with a leap second. */
function lastMinuteOfUtcDay(hour: number, minute: number, offset: string): boolean {
  const offsetMinutes =
    offset === 'Z' ? 0 : (offset[0] === '-' ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
  const utcMinute = (((hour * 60 + minute - offsetMinutes) % 1440) + 1440) % 1440;
  return utcMinute === 23 * 60 + 59;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** RFC 9110 5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms every recipient must accept. */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);
const FIFTY_YEARS_MS = 50 * 365.25 * 24 * 3600 * 1000;

/**
 * Parses an HTTP-date (RFC 9110 5.6.7) to epoch milliseconds; `undefined` when the text is not
 * one (a list of dates included). A two-digit RFC 850 year more than 50 years after `now` is
 * taken as the most recent past year with those digits, as the RFC says.
 */
export function parseHttpDate(text: string, now: Date): number | undefined {
  let day: string, month: string, year: number, time: string[];
  let m = IMF_FIXDATE.exec(text);
  if (m) [day, month, year, time] = [m[1], m[2], Number(m[3]), m.slice(4)];
  else if ((m = ASCTIME_DATE.exec(text))) [month, day, time, year] = [m[1], m[2], m.slice(3, 6), Number(m[6])];
  else if ((m = RFC850_DATE.exec(text))) {
    [day, month, time] = [m[1], m[2], m.slice(4)];
    const century = Math.floor(now.getUTCFullYear() / 100) * 100;
    year = century + Number(m[3]);
    if (Date.UTC(year, 0, 1) - now.getTime() > FIFTY_YEARS_MS) year -= 100;
  } else return undefined;
  const [hour, minute, second] = time.map(Number);
  const monthIndex = MONTHS.indexOf(month);
  const dayOfMonth = Number(day.trim());
  if (hour > 23 || minute > 59 || second > 60 || dayOfMonth < 1) return undefined;
  if (dayOfMonth > daysInMonth(year, monthIndex)) return undefined;
  // A leap second is the last second of its minute.
  return utcTime(year, monthIndex, dayOfMonth, hour, minute, Math.min(second, 59));
}

/**
 * Date.UTC without its mapping of years 0 to 99 to 1900 to 1999: an HTTP-date or RFC 3339 year
 * is four digits, and 0050 is the year 50 (found by instant.properties.spec.ts).
 */
function utcTime(year: number, monthIndex: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

function daysInMonth(year: number, monthIndex: number): number {
  return new Date(utcTime(year, monthIndex + 1, 0)).getUTCDate();
}
