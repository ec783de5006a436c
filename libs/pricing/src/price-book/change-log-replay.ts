import { compareNatural } from '../catalogue/natural-order';
import { escapeWord } from '../errors/bounded-text';
import { storedInstant } from './price-history';
import {
  CHAIN_START,
  entryHash,
  entryHashOfRule2,
  type ChainRule,
  EFFECT_OF,
  END_FIELDS,
  INITIAL_AVAILABILITY,
  isLoggedEffect,
  RECORD_FIELDS,
  type ChainEntry,
  type LoggedRecord,
} from './change-log-chain';

// The change log checked (the `verify` command): its entries replayed into the book they say it
// holds, compared with the stored book, and its hash chain followed link by link.

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

/** An entry as the log holds it: its id, the hash stored with it, and the rule it was hashed by. */
export interface StoredEntry {
  readonly id: string;
  readonly entry: ChainEntry;
  readonly hash: string | null;
  readonly rule: ChainRule;
}

/**
 * Checks the change log entry by entry, in id order (`npm run pricing -- verify`): each entry's
 * hash against its content and the previous entry's hash (by its chain rule), its instant not
 * before the previous entry's, and, for an entry the database dated (rule 2), every record it wrote
 * recorded at its instant; then its effect replayed (LogReplay); the book it gives is compared with
 * the stored one after (`replay.comparison()`). A problem is reported and the check goes on: the
 * next entry links to the hash stored (what a later entry was hashed from), and an effect that does
 * not apply is left out of the replay.
 */
export class ChainVerifier {
  readonly replay = new LogReplay();
  private previous = CHAIN_START;
  private previousAt: bigint | undefined;
  private count = 0;
  private sound = 0;

  /** Entries checked, and the hash of the last of them: the chain's head (CHAIN_START for none). */
  get entries(): number {
    return this.count;
  }

  get head(): string {
    return this.previous;
  }

  /** Checks the next entry; `undefined`, or what is wrong with it, naming it. */
  check({ id, entry, hash, rule }: StoredEntry): string | undefined {
    const name = entryName(id, entry);
    const checked = this.count;
    this.count++;
    let computed: string | undefined;
    try {
      computed = rule === 2 ? entryHashOfRule2(this.previous, id, entry) : entryHash(this.previous, entry);
    } catch {
      computed = undefined;
    }
    this.previous = hash ?? computed ?? this.previous;
    if (computed === undefined) return `${name}: its effect is not of the change log's form`;
    const problems: string[] = [];
    if (hash !== computed) {
      const before =
        checked === 0
          ? 'it is the first entry'
          : this.sound === checked
            ? checked === 1
              ? 'the entry before it checks out'
              : `the ${checked} entries before it check out`
            : 'an entry before it does not check out either';
      problems.push(
        `${name}: its hash does not match its content and the entry before it (stored ${shown(hash)}, ` +
          `computed ${computed}): it, or its hash, was changed after it was written (${before})`,
      );
    }
    const at = /^-?\d+$/.test(entry.changedAt) ? BigInt(entry.changedAt) : undefined;
    if (at === undefined) problems.push(`${name}: its instant is not an instant`);
    else {
      if (this.previousAt !== undefined && at < this.previousAt) {
        problems.push(`${name}: its instant is before the entry's before it: the log's instants never go backwards`);
      }
      this.previousAt = at;
    }
    if (rule === 2) {
      const recorded = entry.effect?.record?.recorded_at;
      if (recorded !== undefined && recorded !== entry.changedAt) {
        problems.push(
          `${name}: the record it wrote was recorded at ${storedInstant(recorded, 'iso')}, not at its instant`,
        );
      }
    }
    // Its effect is replayed whatever its hash says: the book is compared with what the log holds.
    const problem = this.replay.apply(entry);
    if (problem !== undefined) problems.push(`${name}: ${problem}`);
    if (problems.length === 0) this.sound++;
    return problems.length === 0 ? undefined : problems.join('\n');
  }
}

/** `entry <id> (<instant>, <kind> <product key>)`, every part escaped. */
export function entryName(id: string, entry: ChainEntry): string {
  const at = storedInstant(entry.changedAt, 'iso');
  return `entry ${escapeWord(id)} (${at}, ${escapeWord(entry.change)} ${escapeWord(entry.productKey)})`;
}
