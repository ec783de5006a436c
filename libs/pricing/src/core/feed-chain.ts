import { createHash, hash } from 'node:crypto';
import { parseProductKey, PRODUCT_FAMILIES } from '../catalogue/catalogue';
import { formatInstant } from './instant';
import type { PriceRecord } from './price-record';

// The public list's changes as a hash chain (docs/price-history-api.md, "The changes as a hash
// chain"): what a client recomputes from `/v1/pricing/changes` alone, and what
// `/v1/pricing/checkpoint` signs. A change's leaf is its JSON as the feed serves it without
// `position` and `hash`, in the JSON Canonicalization Scheme (RFC 8785: members sorted by their
// names' UTF-16 code units, no white space, strings as JSON.stringify writes them; the feed has no
// number but integers); the hash of the change at position n is SHA-256 of the hash at n - 1 (32
// bytes; 32 zero bytes before the first) and the leaf's UTF-8 bytes.

/** The hash before the first change: the head of an empty chain. */
export const EMPTY_CHAIN_HEAD: Buffer = Buffer.alloc(32);

/** A change as the feed serves it (ListChange's fields, the entries as the list showed them). */
export interface ChangeLeaf {
  readonly at: number;
  readonly productKey: string;
  readonly family: number;
  readonly before: PriceRecord | null;
  readonly after: PriceRecord | null;
}

/** The leaf of a change: its served JSON without position and hash, canonical (RFC 8785). */
export function changeLeaf(change: ChangeLeaf): string {
  return new LeafWriter().leaf(change);
}

/** The hash of a change whose leaf is `leaf`, after the hash `previous`. */
export function chainHash(previous: Buffer, leaf: string): Buffer {
  return createHash('sha256').update(previous).update(leaf, 'utf8').digest();
}

/**
 * chainHash for many changes in a row: the hash before and the leaf's UTF-8 bytes written into one
 * buffer kept between calls, hashed in one call (crypto.hash: less than half of createHash's time,
 * which made a million changes take seconds more).
 */
export class ChainHasher {
  private scratch = Buffer.allocUnsafe(4096);

  hash(previous: Uint8Array, leaf: string): Buffer {
    const out = Buffer.allocUnsafe(32);
    this.hashInto(previous, leaf, out, 0);
    return out;
  }

  /** Writes the hash into `target` at `offset`: no buffer made per hash (a million of them cost a second of GC). */
  hashInto(previous: Uint8Array, leaf: string, target: Buffer, offset: number): void {
    this.hashPartsInto(previous, [leaf], target, offset);
  }

  /**
   * hashInto of the leaf `parts.join('')`, written in one call (a call per part cost a third more
   * at a million changes); `target` may be `previous`.
   */
  hashPartsInto(previous: Uint8Array, parts: readonly string[], target: Buffer, offset: number): void {
    const leaf = parts.join('');
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    if (this.scratch.length < 32 + 3 * leaf.length) this.scratch = Buffer.allocUnsafe(2 * (32 + 3 * leaf.length));
    this.scratch.set(previous, 0);
    const length = 32 + this.scratch.write(leaf, 32, 'utf8');
    target.write(hash('sha256', this.scratch.subarray(0, length), 'binary'), offset, 'binary');
  }
}

/** Instants formatted at most, before a LeafWriter forgets them. */
const INSTANTS_HELD = 4_096;

/**
 * Writes the leaves of many changes, what repeats across them written once by the caller (a key's
 * dimensions, an entry: a product's entry after one change is its entry before its next) or here
 * (the instants: a version's changes share theirs).
 */
export class LeafWriter {
  private readonly instants = new Map<number, string>();

  /** The leaf of `change`. */
  leaf(change: ChangeLeaf): string {
    return this.leafOf(change, this.entry(change.before), this.entry(change.after));
  }

  /** The leaf of a change whose entries `before` and `after` are as `entry` wrote them. */
  leafOf(change: Omit<ChangeLeaf, 'before' | 'after'>, before: string, after: string): string {
    return this.leafParts(change, before, after).join('');
  }

  /** leafOf's text in parts, to be written one after another (ChainHasher.hashPartsInto). */
  leafParts(change: Omit<ChangeLeaf, 'before' | 'after'>, before: string, after: string): string[] {
    return [
      '{"after":',
      after,
      ',"at":',
      this.instant(change.at),
      ',"before":',
      before,
      `,"family":${JSON.stringify(PRODUCT_FAMILIES[change.family].family)},"product_key":`,
      JSON.stringify(change.productKey),
      '}',
    ];
  }

  /**
   * An entry (section 2.3) in the canonical form, written out (its members in RFC 8785's order: a
   * general canonicalizer took four times as long, and every change of the feed is hashed).
   */
  entry(record: PriceRecord | null): string {
    if (record === null) return 'null';
    return this.entryOf(record, record.validUntil, this.dimensionsOf(record.productKey));
  }

  /**
   * The entry of `record` shown with the end `until` (the list shows the end known then); its
   * key's `dimensions` member as dimensionsOf writes it.
   */
  entryOf(record: PriceRecord, until: number | null, dimensions: string): string {
    return (
      `{"amount":${JSON.stringify(record.amount)},${dimensions}` +
      `"product_key":${JSON.stringify(record.productKey)},"unit_count":${record.unitCount},` +
      `"unit_type":${JSON.stringify(record.unitType)},"valid_from":${this.instant(record.validFrom)},` +
      `"valid_until":${until === null ? 'null' : this.instant(until)}}`
    );
  }

  /** An instant as a JSON string. */
  private instant(at: number): string {
    let text = this.instants.get(at);
    if (text === undefined) {
      if (this.instants.size === INSTANTS_HELD) this.instants.clear();
      this.instants.set(at, (text = JSON.stringify(formatInstant(at))));
    }
    return text;
  }

  /** The `"dimensions":{...},` member of a key's entries ('' for a key with none). */
  dimensionsOf(productKey: string): string {
    const dimensions = parseProductKey(productKey)?.dimensions;
    return dimensions ? `"dimensions":${canonicalStrings(dimensions)},` : '';
  }
}

/** An object of strings in RFC 8785's form: members sorted by their names' UTF-16 code units. */
function canonicalStrings(object: Readonly<Partial<Record<string, string>>>): string {
  const names = Object.keys(object)
    .filter((name) => object[name] !== undefined)
    .sort();
  return `{${names.map((name) => `${JSON.stringify(name)}:${JSON.stringify(object[name])}`).join(',')}}`;
}

/**
 * Any JSON value in RFC 8785's form, as a client recomputes a leaf from the feed alone: members
 * sorted by their names' UTF-16 code units, no white space, numbers and strings as ECMAScript's
 * JSON.stringify writes them. `undefined` for what JSON cannot hold (a number not finite), or a
 * value nested deeper than `maxDepth`.
 */
export function canonicalJson(value: unknown, maxDepth = 64): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : undefined;
  if (typeof value !== 'object' || maxDepth === 0) return undefined;
  const parts: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      const text = canonicalJson(item, maxDepth - 1);
      if (text === undefined) return undefined;
      parts.push(text);
    }
    return `[${parts.join(',')}]`;
  }
  const object = value as Record<string, unknown>;
  for (const name of Object.keys(object).sort()) {
    const text = canonicalJson(object[name], maxDepth - 1);
    if (text === undefined) return undefined;
    parts.push(`${JSON.stringify(name)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}
