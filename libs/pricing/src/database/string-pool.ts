/**
 * One instance of each distinct string: product keys, organization ids, unit types and amounts
 * repeat across a book's records, and each row read brings its own copy. Grows with the distinct
 * values, never shrinks.
 */
export class StringPool {
  private readonly strings = new Map<string, string>();

  intern<T extends string | null>(text: T): T {
    if (text === null) return text;
    const held = this.strings.get(text);
    if (held !== undefined) return held as T;
    this.strings.set(text, text);
    return text;
  }
}
