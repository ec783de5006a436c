import { formatMicros } from '../core/instant';
import { escapeWord } from '../errors/bounded-text';
import { isInForce, type PriceRecord } from '../core/price-record';
import type { LoggedEffect, LoggedRecord } from './change-log-chain';

// The history of a price as the change log and the records hold it: what `history` and `changes`
// read (database/price-book-reads.ts), and the rules of what a change says it did. How the CLI
// prints it is cli/format-history.ts and cli/format-changes.ts.

/** The kinds of rows of the change log (`price_change`). */
export type PriceChangeKind = 'set' | 'end' | 'withdraw_price' | 'withdraw_end' | 'availability';

/** One write of the change log: when, what, the record it concerned, who and why, and what it did. */
export interface PriceChange {
  /** Epoch milliseconds. */
  readonly changedAt: number;
  /**
   * The instant as stored, epoch microseconds in decimal or PostgreSQL's `infinity` and
   * `-infinity`, when JavaScript cannot represent it (a row written by hand): shown instead.
   */
  readonly changedAtText?: string;
  readonly change: PriceChangeKind;
  readonly priceRecordId: number | null;
  /** Who made the write (author.ts); `null` for writes recorded before actors were. */
  readonly actor: string | null;
  readonly reason: string | null;
  /**
   * What the write did, as it left the book (change-log-chain.ts): shown instead of the records
   * as they are now. `null` when the row holds nothing of the log's form (written by hand).
   */
  readonly effect: LoggedEffect | null;
  /**
   * An availability change: what it set (on sale or not), `null` when it was recorded before the
   * log kept that (migration 1764000008000). Absent for the other kinds.
   */
  readonly onSale?: boolean | null;
}

/** A change of any key and scope (the `changes` command). */
export interface LoggedChange extends PriceChange {
  readonly productKey: string;
  readonly organizationId: string | null;
  /**
   * What an availability change set (on sale or not); `null` for the other kinds, and for an
   * availability change recorded before the log kept it (migration 1764000008000).
   */
  readonly onSale: boolean | null;
}

/** A record as history shows it: its instants as stored too, where JavaScript cannot represent them. */
export interface HistoryRecord extends PriceRecord {
  /** Epoch microseconds in decimal, for the instants a number cannot show (a row written by hand). */
  readonly instantTexts?: {
    readonly validFrom?: string;
    readonly validUntil?: string;
    readonly recordedAt?: string;
  };
}

/**
 * Every record of one key and scope, by `valid_from`, and the change log of that key and scope with
 * the product's availability changes among it, oldest first; and whether the product is on sale now.
 */
export interface PriceHistory {
  readonly records: readonly HistoryRecord[];
  readonly changes: readonly PriceChange[];
  /** The product's availability now (product_availability; a product without a row is on sale). Absent: on sale. */
  readonly onSale?: boolean;
}

export type RecordStatus = 'ended' | 'in-force' | 'scheduled';

/** A record's status at `now`, epoch milliseconds. */
export function statusAt(record: Pick<PriceRecord, 'validFrom' | 'validUntil'>, now: number): RecordStatus {
  if (isInForce(record, now)) return 'in-force';
  return record.validFrom > now ? 'scheduled' : 'ended';
}

/** An instant as the change log holds it (epoch microseconds, or PostgreSQL's word), shown whatever it is. */
export function storedInstant(text: string, form?: 'iso'): string {
  return formatMicros(text, form) ?? escapeWord(text);
}

/**
 * The record a change names as its write left it (its effect): `set` the record written, an end
 * the record ended, reopened or re-ended; `null` for a withdrawn price (and a row written before
 * the chain whose record was gone by then); `undefined` when the row holds no such effect (a row
 * written by hand).
 */
export function writtenRecord(change: PriceChange): LoggedRecord | null | undefined {
  const { effect } = change;
  if (effect === null) return undefined;
  const id = change.priceRecordId === null ? undefined : String(change.priceRecordId);
  const record =
    change.change === 'set'
      ? effect.record
      : change.change === 'end' || change.change === 'withdraw_end'
        ? (effect.ends?.find((end) => end.id === id) ?? effect.ends?.[0])
        : undefined;
  if (record) return record;
  return change.change === 'withdraw_price' || effect.before_chain ? null : undefined;
}
