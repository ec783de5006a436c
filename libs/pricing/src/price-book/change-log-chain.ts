import { createHash } from 'node:crypto';
import { compareNatural } from '../catalogue/natural-order';
import { formatMicros } from '../core/instant';
import { escapeWord } from '../errors/bounded-text';

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
 * The entry's hash: SHA-256 (hex) of the previous entry's hash, a line feed and the entry's
 * canonical JSON. `effectJson`, when given, is canonicalJson(entry.effect), already made (a write
 * stores it too: made once).
 */
export function entryHash(previous: string, entry: ChainEntry, effectJson = canonicalJson(entry.effect)): string {
  return createHash('sha256')
    .update(`${previous}\n${canonicalEntry(entry, effectJson)}`)
    .digest('hex');
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
 * products not on sale (database/migrations/1764000000000-pricing-schema.ts).
 */
export const INITIAL_AVAILABILITY: ReadonlyMap<string, boolean> = new Map([
  ['storage.io1', false],
  ['storage.st1', false],
]);

/** The columns of a record, in the table's order. */
const RECORD_FIELDS: readonly (keyof LoggedRecord)[] = [
  'id',
  'product_key',
  'organization_id',
  'unit_type',
  'unit_count',
  'amount',
  'valid_from',
  'valid_until',
  'recorded_at',
  'superseded_by',
];
const NULLABLE: ReadonlySet<keyof LoggedRecord> = new Set(['organization_id', 'valid_until', 'superseded_by']);
/** What an end may change of a record: the rest is history (docs/decisions.md, "Rules the database holds"). */
const END_FIELDS: ReadonlySet<keyof LoggedRecord> = new Set(['valid_until', 'superseded_by']);
/** The parts of an effect each kind of entry may have. */
const EFFECT_OF: Readonly<Record<string, ReadonlySet<string>>> = {
  set: new Set(['record', 'before_chain']),
  end: new Set(['ends', 'before_chain']),
  withdraw_price: new Set(['deleted', 'ends', 'before_chain']),
  withdraw_end: new Set(['ends', 'before_chain']),
  availability: new Set(['on_sale', 'before_chain']),
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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

/**
 * The book an entry sequence gives: every record and the availability of products. Strings that
 * repeat across records (keys, scopes, units, amounts, instants) are held once, so that the
 * replay of a million records fits in memory.
 */
export class LogReplay {
  private readonly held = new Map<string, LoggedRecord>();
  private readonly onSale = new Map<string, boolean>(INITIAL_AVAILABILITY);
  private readonly strings = new Map<string, string>();

  /**
   * Applies `entry`; a problem when its effect is not of the change log's form or does not fit its
   * kind, key and scope, or when it writes a record the entries before it wrote already, or ends,
   * reopens or deletes one they did not leave (or changes more of it than its end).
   */
  apply(entry: ChainEntry): string | undefined {
    const effect: unknown = entry.effect;
    if (!isLoggedEffect(effect)) return "its effect is not of the change log's form";
    const parts = EFFECT_OF[entry.change];
    if (!parts || !Object.keys(effect).every((part) => parts.has(part))) {
      return `its effect (${Object.keys(effect).join(', ')}) does not fit an entry of kind ${escapeWord(entry.change)}`;
    }
    const { record, ends = [], deleted } = effect;
    for (const named of record ? [record, ...ends] : ends) {
      if (named.product_key !== entry.productKey || named.organization_id !== entry.organizationId) {
        return `its effect names record ${escapeWord(named.id)}, of another product key or scope`;
      }
    }
    if (record) {
      if (record.id !== entry.priceRecordId) {
        return `it names record ${escapeWord(entry.priceRecordId ?? 'none')} and writes record ${escapeWord(record.id)}`;
      }
      if (this.held.has(record.id)) return `it writes record ${escapeWord(record.id)}, which an entry before it wrote`;
      this.held.set(record.id, this.compact(record));
    }
    if (deleted !== undefined && !this.held.delete(deleted)) {
      return `it deletes record ${escapeWord(deleted)}, which the entries before it did not leave`;
    }
    for (const end of ends) {
      const before = this.held.get(end.id);
      if (!before) return `it ends record ${escapeWord(end.id)}, which the entries before it did not leave`;
      const rewritten = RECORD_FIELDS.filter((field) => !END_FIELDS.has(field) && before[field] !== end[field]);
      if (rewritten.length > 0) return `its end of record ${escapeWord(end.id)} changes ${rewritten.join(', ')}`;
      this.held.set(end.id, this.compact(end));
    }
    if (effect.on_sale !== undefined) this.onSale.set(entry.productKey, effect.on_sale);
    return undefined;
  }

  /** A comparison of the stored book with the book the entries applied give. */
  comparison(): BookComparison {
    return new BookComparison(this.held, this.onSale);
  }

  /**
   * The first product key, in natural order, whose stored records or availability differ from the
   * log's, with what differs; `undefined` when the book equals its log.
   */
  firstDifference(
    stored: Iterable<LoggedRecord>,
    storedAvailability: ReadonlyMap<string, boolean>,
  ): BookDifference | undefined {
    const comparison = this.comparison();
    comparison.add(stored);
    return comparison.firstDifference(storedAvailability);
  }

  /** `record` with its repeating strings held once (its id is its own). */
  private compact(record: LoggedRecord): LoggedRecord {
    const intern = <T extends string | null>(text: T): T => {
      if (text === null) return text;
      const held = this.strings.get(text);
      if (held !== undefined) return held as T;
      this.strings.set(text, text);
      return text;
    };
    return {
      id: record.id,
      product_key: intern(record.product_key),
      organization_id: intern(record.organization_id),
      unit_type: intern(record.unit_type),
      unit_count: intern(record.unit_count),
      amount: intern(record.amount),
      valid_from: intern(record.valid_from),
      valid_until: intern(record.valid_until),
      recorded_at: intern(record.recorded_at),
      superseded_by: intern(record.superseded_by),
    };
  }
}

/** A product key whose stored records or availability differ from the log's, and what differs. */
export interface BookDifference {
  readonly productKey: string;
  readonly what: string;
}

/**
 * The stored book compared with the log's (LogReplay.comparison): stored records are added a page
 * at a time, then firstDifference names the first product key that differs. Only the ids seen and
 * the first difference of each key are held.
 */
export class BookComparison {
  private readonly seen = new Set<string>();
  private readonly differing = new Map<string, string>();

  constructor(
    private readonly logged: ReadonlyMap<string, LoggedRecord>,
    private readonly loggedOnSale: ReadonlyMap<string, boolean>,
  ) {}

  /** Compares stored records, each once. */
  add(stored: Iterable<LoggedRecord>): void {
    for (const record of stored) {
      this.seen.add(record.id);
      const logged = this.logged.get(record.id);
      const key = record.product_key;
      if (!logged) note(this.differing, key, `record ${escapeWord(record.id)} is stored but no entry wrote it`);
      else {
        const differs = RECORD_FIELDS.filter((field) => logged[field] !== record[field]);
        if (differs.length > 0) {
          const what = differs.map(
            (field) => `${field} ${shown(record[field])} stored, ${shown(logged[field])} in the log`,
          );
          note(this.differing, key, `record ${escapeWord(record.id)} differs: ${what.join('; ')}`);
        }
      }
    }
  }

  /**
   * The first product key, in natural order, whose stored records (those added) or availability
   * differ from the log's, with its first difference; `undefined` when the book equals its log.
   */
  firstDifference(storedAvailability: ReadonlyMap<string, boolean>): BookDifference | undefined {
    const differing = new Map(this.differing);
    for (const [id, logged] of this.logged) {
      if (!this.seen.has(id))
        note(differing, logged.product_key, `record ${escapeWord(id)} is in the log but not stored`);
    }
    for (const productKey of new Set([...this.loggedOnSale.keys(), ...storedAvailability.keys()])) {
      const logged = this.loggedOnSale.get(productKey);
      const stored = storedAvailability.get(productKey);
      if (logged !== stored) {
        note(
          differing,
          productKey,
          `availability is ${availability(stored)} stored, ${availability(logged)} in the log`,
        );
      }
    }
    let first: string | undefined;
    for (const productKey of differing.keys()) {
      if (first === undefined || compareNatural(productKey, first) < 0) first = productKey;
    }
    return first === undefined ? undefined : { productKey: first, what: differing.get(first)! };
  }
}

function note(differing: Map<string, string>, productKey: string, what: string): void {
  if (!differing.has(productKey)) differing.set(productKey, what);
}

function shown(value: string | null): string {
  return value === null ? 'null' : escapeWord(value);
}

function availability(onSale: boolean | undefined): string {
  return onSale === undefined ? 'unset' : onSale ? 'on sale' : 'off sale';
}

/** An entry as the log holds it: its id, and the hash stored with it. */
export interface StoredEntry {
  readonly id: string;
  readonly entry: ChainEntry;
  readonly hash: string | null;
}

/**
 * Checks the change log entry by entry, in id order (`npm run pricing -- verify`): each entry's
 * hash against its content and the previous entry's hash, then its effect replayed (LogReplay);
 * the book it gives is compared with the stored one after (`replay.comparison()`).
 */
export class ChainVerifier {
  readonly replay = new LogReplay();
  private previous = CHAIN_START;
  private count = 0;

  /** Entries checked, and the hash of the last of them: the chain's head (CHAIN_START for none). */
  get entries(): number {
    return this.count;
  }

  get head(): string {
    return this.previous;
  }

  /** Checks the next entry; `undefined`, or what is wrong with it, naming it. */
  check({ id, entry, hash }: StoredEntry): string | undefined {
    const name = entryName(id, entry);
    let computed: string;
    try {
      computed = entryHash(this.previous, entry);
    } catch {
      return `${name}: its effect is not of the change log's form`;
    }
    if (hash !== computed) {
      const before =
        this.count === 0
          ? 'it is the first entry'
          : this.count === 1
            ? 'the entry before it checks out'
            : `the ${this.count} entries before it check out`;
      return (
        `${name}: its hash does not match its content and the entry before it (stored ${shown(hash)}, ` +
        `computed ${computed}): it, or its hash, was changed after it was written (${before})`
      );
    }
    const problem = this.replay.apply(entry);
    if (problem !== undefined) return `${name}: ${problem}`;
    this.previous = computed;
    this.count++;
    return undefined;
  }
}

/** `entry <id> (<instant>, <kind> <product key>)`, every part escaped. */
export function entryName(id: string, entry: ChainEntry): string {
  const at = formatMicros(entry.changedAt, 'iso') ?? escapeWord(entry.changedAt);
  return `entry ${escapeWord(id)} (${at}, ${escapeWord(entry.change)} ${escapeWord(entry.productKey)})`;
}
