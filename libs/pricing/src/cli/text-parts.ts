// Output that never fails on its size: widths found with a loop (spreading a million values into
// Math.max overflows the stack), and documents written in parts (a V8 string ends at 512 MB, and
// a million plan lines or book entries come close), so that what runs after a write commits
// cannot fail on the book's size.

/** The length of the longest of `texts`; 0 for none. */
export function widest(texts: Iterable<string>): number {
  let width = 0;
  for (const text of texts) if (text.length > width) width = text.length;
  return width;
}

/** Items per part of a document written in parts. */
const ITEMS_PER_PART = 1_000;

/**
 * The text `JSON.stringify({ ...head, [lastKey]: [...items] }, null, 2) + '\n'` gives, written as
 * the items come (a page of a database read at a time): `add` gives the text of the next items,
 * `end` the rest of the document. Together, the same bytes.
 */
export class PrettyJsonArray {
  private readonly opening: string;
  private count = 0;

  constructor(head: Readonly<Record<string, unknown>>, lastKey: string) {
    const empty = JSON.stringify({ ...head, [lastKey]: [] }, null, 2); // ends with `"<lastKey>": []\n}`
    this.opening = empty.slice(0, empty.length - '[]\n}'.length);
  }

  add(items: Iterable<unknown>): string {
    let text = '';
    for (const item of items) {
      text += `${this.count++ === 0 ? `${this.opening}[\n` : ',\n'}    ${JSON.stringify(item, null, 2).replaceAll('\n', '\n    ')}`;
    }
    return text;
  }

  end(): string {
    return this.count === 0 ? `${this.opening}[]\n}\n` : '\n  ]\n}\n';
  }
}

/** As PrettyJsonArray, for items at hand: in parts of at most ITEMS_PER_PART items each. */
export function* prettyJsonParts(
  head: Readonly<Record<string, unknown>>,
  lastKey: string,
  items: Iterable<unknown>,
): Generator<string, void, void> {
  const document = new PrettyJsonArray(head, lastKey);
  let batch: unknown[] = [];
  for (const item of items) {
    batch.push(item);
    if (batch.length === ITEMS_PER_PART) {
      yield document.add(batch);
      batch = [];
    }
  }
  const last = document.add(batch) + document.end();
  yield last;
}

/** `lines` (each ending with a newline) joined in parts of at most ITEMS_PER_PART lines. */
export function* joinedInParts(lines: Iterable<string>): Generator<string, void, void> {
  let part = '';
  let count = 0;
  for (const line of lines) {
    part += line;
    if (++count % ITEMS_PER_PART === 0) {
      yield part;
      part = '';
    }
  }
  if (part !== '') yield part;
}
