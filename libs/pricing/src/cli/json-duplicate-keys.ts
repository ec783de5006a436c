/** A key that one object of a JSON text has twice, and the line (from 1) of its second one. */
export interface DuplicateKey {
  readonly key: string;
  readonly line: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

/**
 * The first key that appears twice in one object of `text`, which must be valid JSON (JSON.parse
 * accepted it); `undefined` when none does. JSON.parse keeps the last of two equal keys without a
 * word, so `{"on_sale": false, "on_sale": true}` reads as on sale to the tool and as off to a
 * person reading the top of the entry: a book or plan file with one is refused (price-book-file.ts).
 * One pass, no recursion: a stack of the keys of each open object (`null` for an array), so the
 * work is linear in the text and any depth fits.
 */
export function findDuplicateKey(text: string): DuplicateKey | undefined {
  const open: (Set<string> | null)[] = [];
  let expectingKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') {
      open.push(new Set());
      expectingKey = true;
    } else if (c === '[') {
      open.push(null);
    } else if (c === '}' || c === ']') {
      open.pop();
      expectingKey = false;
    } else if (c === ',') {
      expectingKey = open[open.length - 1] != null;
    } else if (c === '"') {
      const end = endOfString(text, i);
      if (expectingKey) {
        const raw = text.slice(i + 1, end);
        // Escapes name the same key differently ("a" and "\u0061"): compare what they decode to.
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        const keys = open[open.length - 1]!;
        if (keys.has(key)) return { key, line: lineOf(text, i) };
        keys.add(key);
        expectingKey = false;
      }
      i = end;
    }
  }
  return undefined;
}

/** The index of the quote that ends the string opening at `start`. */
function endOfString(text: string, start: number): number {
  let i = start + 1;
  for (let c = text.charCodeAt(i); c !== QUOTE; c = text.charCodeAt(i)) i += c === BACKSLASH ? 2 : 1;
  return i;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === NEWLINE) line++;
  return line;
}
