import { formatInstant } from '../price-list/instant';
import { isInForce, type PriceRecord } from '../price-list/price-record';

/** The kinds of rows of the change log (`price_change`). */
export type PriceChangeKind = 'set' | 'end' | 'withdraw_price' | 'withdraw_end' | 'availability';

/** One write of the change log: when, what, and the record it concerned (gone when withdrawn). */
export interface PriceChange {
  readonly changedAt: Date;
  readonly change: PriceChangeKind;
  readonly priceRecordId: string | null;
}

/** Every record of one key and scope, by `valid_from`, and the change log of that key and scope, oldest first. */
export interface PriceHistory {
  readonly records: readonly PriceRecord[];
  readonly changes: readonly PriceChange[];
}

export type RecordStatus = 'ended' | 'in-force' | 'scheduled';

export function statusAt(record: PriceRecord, now: Date): RecordStatus {
  if (isInForce(record, now)) return 'in-force';
  return record.validFrom.getTime() > now.getTime() ? 'scheduled' : 'ended';
}

/**
 * The history of one key and scope as the `history` command prints it (README, "Price book
 * CLI"): a heading; one line per record, oldest first: its status at `now`, terms, window and
 * when it was recorded; then the change log of the key and scope, oldest first: when, what
 * (`set`, `end set`, `withdrawn`, `end withdrawn`) and which price. A withdrawn scheduled price
 * has no record any more: the log still says when it was recorded and withdrawn.
 */
export function formatHistory(
  history: PriceHistory,
  productKey: string,
  organizationId: string | null,
  now: Date,
): string {
  const scope = organizationId === null ? 'list price' : `organization ${organizationId}`;
  const { records, changes } = history;
  if (records.length === 0 && changes.length === 0) {
    return `history of ${productKey} (${scope}) at ${formatInstant(now)}: no records\n`;
  }
  const terms = records.map((r) => `${r.amount} per ${r.unitCount} ${r.unitType}`);
  const windows = records.map(
    (r) => `from ${formatInstant(r.validFrom)}${r.validUntil ? ` until ${formatInstant(r.validUntil)}` : ''}`,
  );
  const termsWidth = Math.max(0, ...terms.map((t) => t.length));
  const windowWidth = Math.max(0, ...windows.map((w) => w.length));
  const recordLines = records.map(
    (record, i) =>
      `${statusAt(record, now).padEnd(STATUS_WIDTH)}${terms[i].padEnd(termsWidth)}  ${windows[i].padEnd(windowWidth)}  ` +
      `recorded ${formatInstant(record.recordedAt)}`,
  );

  const byId = new Map(records.map((r) => [r.id, r]));
  const setAt = new Map(
    changes.flatMap((c) => (c.change === 'set' && c.priceRecordId ? [[c.priceRecordId, c.changedAt]] : [])),
  );
  const instants = changes.map((c) => formatInstant(c.changedAt));
  const instantWidth = Math.max(0, ...instants.map((t) => t.length));
  const changeLines = changes.map((change, i) => {
    const record = change.priceRecordId === null ? undefined : byId.get(change.priceRecordId);
    const recordedAt = change.priceRecordId === null ? undefined : setAt.get(change.priceRecordId);
    const which = record
      ? `${record.amount} per ${record.unitCount} ${record.unitType} from ${formatInstant(record.validFrom)}`
      : change.change === 'withdraw_price' && recordedAt
        ? `the scheduled price recorded ${formatInstant(recordedAt)}`
        : 'a scheduled price, withdrawn since';
    return `  ${instants[i].padEnd(instantWidth)}  ${CHANGE_LABELS[change.change].padEnd(CHANGE_WIDTH)}${which}`;
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

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
