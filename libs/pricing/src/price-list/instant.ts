/** RFC 3339 in UTC with `Z`; milliseconds only when there are any. */
export function formatInstant(instant: Date): string {
  const iso = instant.toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/** IMF-fixdate, as in `Last-Modified`. */
export function formatHttpDate(instant: Date): string {
  return instant.toUTCString();
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,3})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 timestamp with an offset. Fractions are limited to milliseconds so that
 * no instant is silently rounded. Returns `undefined` when the text is not such a timestamp.
 */
export function parseInstant(text: string): Date | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, year, month, day, hour, minute, second] = m.map(Number);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  const offset = m[8].toUpperCase();
  if (offset !== 'Z' && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59)) return undefined;
  const instant = new Date(text.toUpperCase());
  return Number.isNaN(instant.getTime()) ? undefined : instant;
}
