/**
 * A key with its natural sort key: a string whose plain comparison is the natural order, so
 * that sorting many keys splits each key once and compares natively.
 */
export interface NaturalKey {
  readonly raw: string;
  readonly sortKey: string;
}

/**
 * Encodes the runs of a key: a digit run as "0", a character for its length without leading
 * zeros, then those digits (a longer number sorts after a shorter one; "0" keeps the place of
 * a digit against other characters); any other run as itself and a NUL, so that a run that
 * is a prefix of another sorts first.
 */
export function naturalKey(raw: string): NaturalKey {
  // Joined, not concatenated: a key's runs as one string, not a tree of them (each timeline keeps one).
  const runs: string[] = [];
  let i = 0;
  while (i < raw.length) {
    let end = i;
    if (isDigit(raw.charCodeAt(i))) {
      while (end < raw.length && isDigit(raw.charCodeAt(end))) end++;
      let start = i;
      while (start < end - 1 && raw.charCodeAt(start) === 48) start++; // leading zeros
      runs.push('0', String.fromCharCode(0x100 + end - start), raw.slice(start, end));
    } else {
      while (end < raw.length && !isDigit(raw.charCodeAt(end))) end++;
      runs.push(raw.slice(i, end), '\u0000');
    }
    i = end;
  }
  return { raw, sortKey: runs.join('') };
}

/**
 * Natural order of product keys (section 2.2): runs of digits compare as numbers, other runs
 * by code point, so `compute.g2.2` < `compute.g2.4` < `compute.g2.16`. Keys that differ only
 * in leading zeros fall back to plain code point order, so the order stays total.
 */
export function compareNatural(a: string, b: string): number {
  return compareNaturalKeys(naturalKey(a), naturalKey(b));
}

export function compareNaturalKeys(a: NaturalKey, b: NaturalKey): number {
  return compareCodePoints(a.sortKey, b.sortKey) || compareCodePoints(a.raw, b.raw);
}

/** Sorts items by a key in natural order, encoding each key once. */
export function sortNatural<T>(items: readonly T[], keyOf: (item: T) => string): T[] {
  return items
    .map((item) => ({ item, key: naturalKey(keyOf(item)) }))
    .sort((a, b) => compareNaturalKeys(a.key, b.key))
    .map(({ item }) => item);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Plain order of strings by UTF-16 code unit: code point order for the ASCII of product keys and scopes. */
export function compareCodePoints(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
