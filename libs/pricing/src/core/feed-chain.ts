import { createHash } from 'node:crypto';
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
  return (
    `{"after":${entryText(change.after)},"at":${JSON.stringify(formatInstant(change.at))},` +
    `"before":${entryText(change.before)},"family":${JSON.stringify(PRODUCT_FAMILIES[change.family].family)},` +
    `"product_key":${JSON.stringify(change.productKey)}}`
  );
}

/** The hash of a change whose leaf is `leaf`, after the hash `previous`. */
export function chainHash(previous: Buffer, leaf: string): Buffer {
  return createHash('sha256').update(previous).update(leaf, 'utf8').digest();
}

/**
 * An entry (section 2.3) in the canonical form, written out (its members in RFC 8785's order: a
 * general canonicalizer took four times as long, and every change of the feed is hashed).
 */
function entryText(record: PriceRecord | null): string {
  if (record === null) return 'null';
  const dimensions = parseProductKey(record.productKey)?.dimensions;
  return (
    `{"amount":${JSON.stringify(record.amount)},` +
    (dimensions ? `"dimensions":${canonicalStrings(dimensions)},` : '') +
    `"product_key":${JSON.stringify(record.productKey)},"unit_count":${record.unitCount},` +
    `"unit_type":${JSON.stringify(record.unitType)},"valid_from":${JSON.stringify(formatInstant(record.validFrom))},` +
    `"valid_until":${record.validUntil === null ? 'null' : JSON.stringify(formatInstant(record.validUntil))}}`
  );
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
