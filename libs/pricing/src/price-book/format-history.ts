import { formatInstant } from '../core/instant';
import { quoteReason } from './author';
import { isInForce, type PriceRecord } from '../core/price-record';
import { widest } from './text-parts';

/** The kinds of rows of the change log (`price_change`). */
export type PriceChangeKind = 'set' | 'end' | 'withdraw_price' | 'withdraw_end' | 'availability';

/** One write of the change log: when, what, the record it concerned (gone when withdrawn), who and why. */
export interface PriceChange {
  /** Epoch milliseconds. */
  readonly changedAt: number;
  readonly change: PriceChangeKind;
  readonly priceRecordId: number | null;
  /** Who made the write (author.ts); `null` for writes recorded before actors were. */
  readonly actor: string | null;
  readonly reason: string | null;
}

/** A change of any key and scope (the `changes` command), with the record it names as it is now. */
export interface LoggedChange extends PriceChange {
  readonly productKey: string;
  readonly organizationId: string | null;
  /** `null` for a withdrawn price (its record is gone) and for availability. */
  readonly record: PriceRecord | null;
  /**
   * What an availability change set (on sale or not); `null` for the other kinds, and for an
   * availability change recorded before the log kept it (migration 1764000008000).
   */
  readonly onSale: boolean | null;
}

/** Every record of one key and scope, by `valid_from`, and the change log of that key and scope, oldest first. */
export interface PriceHistory {
  readonly records: readonly PriceRecord[];
  readonly changes: readonly PriceChange[];
}

export type RecordStatus = 'ended' | 'in-force' | 'scheduled';

/** A record's status at `now`, epoch milliseconds. */
export function statusAt(record: Pick<PriceRecord, 'validFrom' | 'validUntil'>, now: number): RecordStatus {
  if (isInForce(record, now)) return 'in-force';
  return record.validFrom > now ? 'scheduled' : 'ended';
}

/**
 * The history of one key and scope as the `history` command prints it (docs/price-book-cli.md,
 * "history"): a heading; one line per record, oldest first: its status at `now` (epoch ms), terms, window and
 * when it was recorded; then the change log of the key and scope, oldest first: when, what
 * (`set`, `end set`, `withdrawn`, `end withdrawn`), which price, who and why (the reason quoted
 * as a JSON string). A withdrawn scheduled price has no record any more: the log still says when
 * it was recorded and withdrawn.
 */
export function formatHistory(
  history: PriceHistory,
  productKey: string,
  organizationId: string | null,
  now: number,
): string {
  const scope = organizationId === null ? 'list price' : `organization ${organizationId}`;
  const { records, changes } = history;
  if (records.length === 0 && changes.length === 0) {
    return `history of ${productKey} (${scope}) at ${formatInstant(now)}: no records\n`;
  }
  const terms = records.map((r) => `${r.amount} per ${r.unitCount} ${r.unitType}`);
  const windows = records.map(
    (r) => `from ${formatInstant(r.validFrom)}${r.validUntil !== null ? ` until ${formatInstant(r.validUntil)}` : ''}`,
  );
  const termsWidth = widest(terms);
  const windowWidth = widest(windows);
  const recordLines = records.map(
    (record, i) =>
      `${statusAt(record, now).padEnd(STATUS_WIDTH)}${terms[i].padEnd(termsWidth)}  ${windows[i].padEnd(windowWidth)}  ` +
      `recorded ${formatInstant(record.recordedAt)}`,
  );

  const byId = new Map(records.map((r) => [r.id, r]));
  const setAt = new Map(
    changes.flatMap((c) => (c.change === 'set' && c.priceRecordId !== null ? [[c.priceRecordId, c.changedAt]] : [])),
  );
  const instants = changes.map((c) => formatInstant(c.changedAt));
  const instantWidth = widest(instants);
  const whiches = changes.map((change) => {
    const record = change.priceRecordId === null ? undefined : byId.get(change.priceRecordId);
    const recordedAt = change.priceRecordId === null ? undefined : setAt.get(change.priceRecordId);
    return record
      ? `${record.amount} per ${record.unitCount} ${record.unitType} from ${formatInstant(record.validFrom)}`
      : change.change === 'withdraw_price' && recordedAt !== undefined
        ? `the scheduled price recorded ${formatInstant(recordedAt)}`
        : 'a scheduled price, withdrawn since';
  });
  const whichWidth = widest(whiches);
  const changeLines = changes.map((change, i) => {
    const columns = `  ${instants[i].padEnd(instantWidth)}  ${CHANGE_LABELS[change.change].padEnd(CHANGE_WIDTH)}`;
    const author = authorColumns(change);
    return author === '' ? `${columns}${whiches[i]}` : `${columns}${whiches[i].padEnd(whichWidth)}  ${author}`;
  });

  const withdrawn = changes.filter((c) => c.change === 'withdraw_price').length;
  const counts = [plural(records.length, 'record'), ...(withdrawn > 0 ? [`${withdrawn} withdrawn`] : [])];
  return [
    `history of ${productKey} (${scope}) at ${formatInstant(now)}: ${counts.join(', ')}, oldest first`,
    ...recordLines,
    ...(changeLines.length > 0 ? ['changes, oldest first:', ...changeLines] : []),
  ]
    .map((line) => `${line}\n`)
    .join('');
}

/** Widths of the status and change columns: the longest word and a space. */
const STATUS_WIDTH = 'scheduled '.length;
const CHANGE_WIDTH = 'end withdrawn '.length;

const CHANGE_LABELS: Record<PriceChangeKind, string> = {
  set: 'set',
  end: 'end set',
  withdraw_price: 'withdrawn',
  withdraw_end: 'end withdrawn',
  availability: 'availability',
};

/** `actor  "reason"`: who and why, the reason quoted (JSON); empty for a write recorded before actors. */
export function authorColumns(change: Pick<PriceChange, 'actor' | 'reason'>): string {
  if (change.actor === null) return '';
  return change.reason === null ? change.actor : `${change.actor}  ${quoteReason(change.reason)}`;
}

/** The history as JSON (`history --json`): the records and the change log, with who and why. */
export function historyJson(
  history: PriceHistory,
  productKey: string,
  organizationId: string | null,
  now: number,
): string {
  const byId = new Map(history.records.map((r) => [r.id, r]));
  const document = {
    product_key: productKey,
    organization_id: organizationId,
    records: history.records.map((record) => ({
      status: statusAt(record, now),
      ...termsJson(record),
      recorded_at: formatInstant(record.recordedAt),
    })),
    changes: history.changes.map((change) => {
      const record = change.priceRecordId === null ? undefined : byId.get(change.priceRecordId);
      return changeJson(change, record ?? null);
    }),
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** One change as JSON: when, what, who and why, and the price it names as it is now (`null` when gone). */
export function changeJson(change: PriceChange, record: PriceRecord | null): Record<string, unknown> {
  return {
    at: formatInstant(change.changedAt),
    change: change.change,
    actor: change.actor,
    reason: change.reason,
    price: record && termsJson(record),
  };
}

function termsJson(record: PriceRecord): Record<string, unknown> {
  return {
    unit_type: record.unitType,
    unit_count: record.unitCount,
    amount: record.amount,
    valid_from: formatInstant(record.validFrom),
    valid_until: record.validUntil === null ? null : formatInstant(record.validUntil),
  };
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
