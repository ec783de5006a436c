import { createHash } from 'node:crypto';
import { isObject, PRICE_FIELDS } from './price-book';

// The change log as evidence (docs/decisions.md, "A change log that proves itself"): each entry
// holds what its write did, and a SHA-256 over its canonical bytes and the previous entry's hash.
// Replaying the entries gives the records and availability the book must hold. Values are text
// (instants as epoch microseconds, amounts as stored), so that an entry hashes the same whoever
// reads it back, from the database or from a file.

/** A record as an entry holds it: every stored column, as text. */
export interface LoggedRecord {
  readonly id: string;
  readonly product_key: string;
  readonly organization_id: string | null;
  readonly unit_type: string;
  readonly unit_count: string;
  readonly amount: string;
  readonly valid_from: string;
  readonly valid_until: string | null;
  readonly recorded_at: string;
  readonly superseded_by: string | null;
}

/**
 * What an entry's write did, every record as the write left it stored: `record`, the record a `set`
 * wrote; `ends`, each record whose end an `end` set, or a withdrawal reopened or moved (only
 * `valid_until` and `superseded_by` may differ from what the log held of it); `deleted`, the id of
 * the scheduled record a `withdraw_price` removed; `on_sale`, what an `availability` change set.
 * `before_chain`: an entry written before the log kept effects, whose effect the migration that
 * added the chain filled from the book as it then was (docs/decisions.md): a record gone by then
 * is in none of them, and an availability change that did not record what it set holds the
 * product's availability then.
 */
export interface LoggedEffect {
  readonly record?: LoggedRecord;
  readonly ends?: readonly LoggedRecord[];
  readonly deleted?: string;
  readonly on_sale?: boolean;
  readonly before_chain?: true;
}

/** One entry of the change log, as hashed. */
export interface ChainEntry {
  /** Epoch microseconds; PostgreSQL's own text for an instant that is not finite. */
  readonly changedAt: string;
  readonly change: string;
  readonly productKey: string;
  readonly organizationId: string | null;
  readonly priceRecordId: string | null;
  readonly actor: string | null;
  readonly reason: string | null;
  readonly onSale: boolean | null;
  readonly effect: LoggedEffect | null;
}

/** The hash the first entry links to. */
export const CHAIN_START = '0'.repeat(64);

/**
 * How an entry is hashed: rule 1, canonicalJson of its fields (entries written before
 * OneClock1764000011000, by the writer); rule 2, the row as PostgreSQL's `jsonb` prints it, its id
 * included (the database hashes every entry since: pricing_change_entry).
 */
export type ChainRule = 1 | 2;

/**
 * The entry's hash: SHA-256 (hex) of the previous entry's hash, a line feed and the entry's
 * canonical JSON. `effectJson`, when given, is canonicalJson(entry.effect), already made (a write
 * stores it too: made once).
 */
export function entryHash(previous: string, entry: ChainEntry, effectJson = canonicalJson(entry.effect)): string {
  return createHash('sha256')
    .update(`${previous}\n${canonicalEntry(entry, effectJson)}`)
    .digest('hex');
}

/**
 * Rule 2's hash of the entry `id`: SHA-256 (hex) of the previous entry's hash, a line feed and the
 * entry as the database's pricing_change_entry prints it (jsonbText). Throws a TypeError on a value
 * an entry never holds (a number: writers write every value as text).
 */
export function entryHashOfRule2(previous: string, id: string, entry: ChainEntry): string {
  const row = {
    actor: entry.actor,
    change: entry.change,
    changed_at: entry.changedAt,
    effect: entry.effect,
    id,
    on_sale: entry.onSale,
    organization_id: entry.organizationId,
    price_record_id: entry.priceRecordId,
    product_key: entry.productKey,
    reason: entry.reason,
  };
  return createHash('sha256')
    .update(`${previous}\n${jsonbText(row)}`)
    .digest('hex');
}

/**
 * `value` as PostgreSQL prints a `jsonb` of it: object keys shorter first, then by their UTF-8 bytes
 * (PostgreSQL's own order of a jsonb object's keys), `": "` and `", "` between; strings escaped as
 * JSON.stringify escapes them (the same characters as PostgreSQL's escape_json). Only strings,
 * booleans, null, arrays and plain objects: a number throws, as its text in the database (`1.50`)
 * is not JavaScript's.
 */
export function jsonbText(value: unknown): string {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += `${i === 0 ? '' : ', '}${jsonbText(value[i])}`;
    return `${text}]`;
  }
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object).filter((key) => object[key] !== undefined);
    keys.sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)));
    let text = '{';
    for (const key of keys) text += `${text === '{' ? '' : ', '}${JSON.stringify(key)}: ${jsonbText(object[key])}`;
    return `${text}}`;
  }
  throw new TypeError(`not a value of the change log: ${typeof value}`);
}

/** The fields of an entry, sorted as canonicalJson sorts keys. */
const ENTRY_FIELDS = [
  'actor',
  'change',
  'changedAt',
  'effect',
  'onSale',
  'organizationId',
  'priceRecordId',
  'productKey',
  'reason',
] as const satisfies readonly (keyof ChainEntry)[];

/** canonicalJson(entry), with the effect's canonical JSON given. */
function canonicalEntry(entry: ChainEntry, effectJson: string): string {
  let text = '{';
  for (const field of ENTRY_FIELDS) {
    const value = field === 'effect' ? effectJson : canonicalJson(entry[field]);
    text += `${text === '{' ? '' : ','}"${field}":${value}`;
  }
  return `${text}}`;
}

/**
 * JSON with object keys sorted by code point and no white space: one text per value. Only
 * strings, booleans, null, arrays and plain objects (numbers are written as text by whoever
 * makes an entry); `undefined` properties are left out.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  // Loops and concatenation: every write and `verify` serialize each entry, a million of them.
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += `${i === 0 ? '' : ','}${canonicalJson(value[i])}`;
    return `${text}]`;
  }
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    let text = '{';
    for (const key of Object.keys(object).sort()) {
      if (object[key] === undefined) continue;
      text += `${text === '{' ? '' : ','}${JSON.stringify(key)}:${canonicalJson(object[key])}`;
    }
    return `${text}}`;
  }
  throw new TypeError(`not a value of the change log: ${typeof value}`);
}

/** Epoch milliseconds as an entry holds an instant: epoch microseconds, as text. */
export function loggedInstant(ms: number): string {
  return `${BigInt(ms) * 1000n}`;
}

/**
 * The availability the schema starts with, before any entry: the first migration marks these
 * products not on sale (database/migrations/1764000000000-pricing-schema.ts;
 * test/testing-support.e2e-spec.ts checks that the two agree).
 */
export const INITIAL_AVAILABILITY: ReadonlyMap<string, boolean> = new Map([
  ['storage.io1', false],
  ['storage.st1', false],
]);

/** The columns of a record, in the table's order: a book's price has the same fields (price-book.ts). */
export const RECORD_FIELDS: readonly (keyof LoggedRecord)[] = [
  'id',
  ...(PRICE_FIELDS as ReadonlySet<keyof LoggedRecord>),
  'recorded_at',
  'superseded_by',
];
export const NULLABLE: ReadonlySet<keyof LoggedRecord> = new Set(['organization_id', 'valid_until', 'superseded_by']);
/** What an end may change of a record: the rest is history (docs/decisions.md, "Rules the database holds"). */
export const END_FIELDS: ReadonlySet<keyof LoggedRecord> = new Set(['valid_until', 'superseded_by']);
/** The parts of an effect each kind of entry may have. */
export const EFFECT_OF: Readonly<Record<string, ReadonlySet<string>>> = {
  set: new Set(['record', 'before_chain']),
  end: new Set(['ends', 'before_chain']),
  withdraw_price: new Set(['deleted', 'ends', 'before_chain']),
  withdraw_end: new Set(['ends', 'before_chain']),
  availability: new Set(['on_sale', 'before_chain']),
};

/** Whether `value` (read from anywhere: a hand-written row) is a record as an entry holds it. */
export function isLoggedRecord(value: unknown): value is LoggedRecord {
  if (!isObject(value) || Object.keys(value).length !== RECORD_FIELDS.length) return false;
  return RECORD_FIELDS.every(
    (field) => typeof value[field] === 'string' || (value[field] === null && NULLABLE.has(field)),
  );
}

/** Whether `value` (read from anywhere: a hand-written row) is an effect of the change log's form. */
export function isLoggedEffect(value: unknown): value is LoggedEffect {
  if (!isObject(value)) return false;
  return Object.entries(value).every(([part, field]) => {
    switch (part) {
      case 'record':
        return isLoggedRecord(field);
      case 'ends':
        return Array.isArray(field) && field.every(isLoggedRecord);
      case 'deleted':
        return typeof field === 'string';
      case 'on_sale':
        return typeof field === 'boolean';
      case 'before_chain':
        return field === true;
      default:
        return false;
    }
  });
}
