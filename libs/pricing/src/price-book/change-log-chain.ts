import { createHash } from 'node:crypto';
import { compareNatural } from '../catalogue/natural-order';

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

/** An end an entry set (or withdrew: `valid_until` back to null, or to an earlier end). */
export interface LoggedEnd {
  readonly id: string;
  readonly valid_until: string | null;
  readonly superseded_by: string | null;
}

/**
 * What an entry's write did: `record`, a record written (`set`); `ends`, ends set or moved (`end`,
 * and the ends a withdrawal reopens or moves); `deleted`, the scheduled record a withdrawal
 * removed; `on_sale`, the availability set.
 */
export interface LoggedEffect {
  readonly record?: LoggedRecord;
  readonly ends?: readonly LoggedEnd[];
  readonly deleted?: string;
  readonly on_sale?: boolean;
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

/** The entry's hash: SHA-256 (hex) of the previous entry's hash, a line feed and the entry's canonical JSON. */
export function entryHash(previous: string, entry: ChainEntry): string {
  return createHash('sha256')
    .update(`${previous}\n${canonicalJson(entry)}`)
    .digest('hex');
}

/**
 * JSON with object keys sorted by code point and no white space: one text per value. Only
 * strings, booleans, null, arrays and plain objects (numbers are written as text by whoever
 * makes an entry); `undefined` properties are left out.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonicalJson(field)}`).join(',')}}`;
  }
  throw new TypeError(`not a value of the change log: ${typeof value}`);
}

/** Epoch milliseconds as an entry holds an instant: epoch microseconds, as text. */
export function loggedInstant(ms: number): string {
  return `${BigInt(ms) * 1000n}`;
}

/**
 * The availability the schema starts with, before any entry: the first migration marks these
 * products not on sale (database/migrations/1764000000000-pricing-schema.ts).
 */
export const INITIAL_AVAILABILITY: ReadonlyMap<string, boolean> = new Map([
  ['storage.io1', false],
  ['storage.st1', false],
]);

/** The book an entry sequence gives: every record and the availability of products. */
export class LogReplay {
  private readonly held = new Map<string, LoggedRecord>();
  private readonly onSale = new Map<string, boolean>(INITIAL_AVAILABILITY);

  /** Applies `entry`; a problem when it names a record the entries before it did not leave. */
  apply(entry: ChainEntry): string | undefined {
    const effect = entry.effect ?? {};
    if (effect.record) this.held.set(effect.record.id, effect.record);
    if (effect.deleted !== undefined && !this.held.delete(effect.deleted))
      return `record ${effect.deleted} is not there`;
    for (const end of effect.ends ?? []) {
      const record = this.held.get(end.id);
      if (!record) return `record ${end.id} is not there`;
      this.held.set(end.id, { ...record, valid_until: end.valid_until, superseded_by: end.superseded_by });
    }
    if (effect.on_sale !== undefined) this.onSale.set(entry.productKey, effect.on_sale);
    return undefined;
  }

  /**
   * The first product key, in natural order, whose stored records or availability differ from the
   * log's, with what differs; `undefined` when the book equals its log.
   */
  firstDifference(
    stored: Iterable<LoggedRecord>,
    storedAvailability: ReadonlyMap<string, boolean>,
  ): { productKey: string; what: string } | undefined {
    const differing = new Map<string, string>();
    const note = (productKey: string, what: string): void => {
      if (!differing.has(productKey)) differing.set(productKey, what);
    };
    const seen = new Set<string>();
    for (const record of stored) {
      seen.add(record.id);
      const logged = this.held.get(record.id);
      if (!logged) note(record.product_key, `record ${record.id} is stored but no entry wrote it`);
      else if (canonicalJson(logged) !== canonicalJson(record))
        note(record.product_key, `record ${record.id} differs: ${describeDifference(logged, record)}`);
    }
    for (const [id, logged] of this.held) {
      if (!seen.has(id)) note(logged.product_key, `record ${id} is in the log but not stored`);
    }
    for (const productKey of new Set([...this.onSale.keys(), ...storedAvailability.keys()])) {
      const logged = this.onSale.get(productKey);
      const held = storedAvailability.get(productKey);
      if (logged !== held) note(productKey, `availability is ${String(held)} stored, ${String(logged)} in the log`);
    }
    const [first] = [...differing.keys()].sort(compareNatural);
    return first === undefined ? undefined : { productKey: first, what: differing.get(first)! };
  }
}

function describeDifference(logged: LoggedRecord, stored: LoggedRecord): string {
  const fields = (Object.keys(stored) as (keyof LoggedRecord)[]).filter((field) => logged[field] !== stored[field]);
  return fields
    .map((field) => `${field} ${String(stored[field])} stored, ${String(logged[field])} in the log`)
    .join('; ');
}
