import { formatInstant, isoString } from '../core/instant';
import { escapeJson, escapeWord } from '../errors/bounded-text';
import type { PriceRecord } from '../core/price-record';
import type { LoggedRecord } from '../price-book/change-log-chain';
import {
  statusAt,
  storedInstant,
  writtenRecord,
  type HistoryRecord,
  type PriceChange,
  type PriceHistory,
} from '../price-book/price-history';
import { widest } from './text-parts';

// How the CLI prints the history of a price (`history`) and the changes of the log (their parts
// `changes` shares: cli/format-changes.ts); what the history is: price-book/price-history.ts.

/**
 * A reason as the CLI prints it: a JSON string whose unprintable characters are all escaped
 * (`\u202e`), so that a reason written past the CLI's checks (the database's rule is looser:
 * docs/decisions.md, "Who changed a price, and why") cannot reorder or hide what a terminal shows.
 */
export function quoteReason(reason: string): string {
  return escapeJson(JSON.stringify(reason));
}

/**
 * The history of one key and scope as the `history` command prints it (docs/price-book-cli.md,
 * "history"): a heading; one line per record, oldest first: its status at `now` (epoch ms), terms, window and
 * when it was recorded; then the change log of the key and scope, oldest first: when, what
 * (`set`, `end set`, `withdrawn`, `end withdrawn`), which price, who and why (the reason quoted
 * as a JSON string), the product's availability changes among them (`on sale`, `off sale`: they
 * concern every scope). A withdrawn scheduled price has no record any more: the log still says when
 * it was recorded and withdrawn. The product's availability has a line of its own when it is not
 * on sale or was ever changed (`availability: off sale ...`); a product without is on sale once
 * priced. Every stored value is escaped (escapeWord), and any stored instant shown, so that no row
 * can act on the terminal or fail the command.
 */
export function formatHistory(
  history: PriceHistory,
  productKey: string,
  organizationId: string | null,
  now: number,
): string {
  const scope = organizationId === null ? 'list price' : `organization ${escapeWord(organizationId)}`;
  const heading = `history of ${escapeWord(productKey)} (${scope}) at ${formatInstant(now)}`;
  const { records, changes } = history;
  if (records.length === 0 && changes.length === 0 && history.onSale !== false) return `${heading}: no records\n`;
  const terms = records.map(termsText);
  const windows = records.map((r) => {
    const until = r.validUntil !== null ? ` until ${recordInstant(r, 'validUntil')}` : '';
    return `from ${recordInstant(r, 'validFrom')}${until}`;
  });
  const termsWidth = widest(terms);
  const windowWidth = widest(windows);
  const recordLines = records.map(
    (record, i) =>
      `${statusAt(record, now).padEnd(STATUS_WIDTH)}${terms[i].padEnd(termsWidth)}  ${windows[i].padEnd(windowWidth)}  ` +
      `recorded ${recordInstant(record, 'recordedAt')}`,
  );

  const byId = new Map(records.map((r) => [r.id, r]));
  const setBy = new Map(
    changes.flatMap((c) => (c.change === 'set' && c.priceRecordId !== null ? [[c.priceRecordId, c]] : [])),
  );
  const instants = changes.map((c) => changeInstant(c));
  const instantWidth = widest(instants);
  const whiches = changes.map((change) => {
    if (change.change === 'availability') return 'the product, in every scope';
    const record = change.priceRecordId === null ? undefined : byId.get(change.priceRecordId);
    const set = change.priceRecordId === null ? undefined : setBy.get(change.priceRecordId);
    return record
      ? `${termsText(record)} from ${recordInstant(record, 'validFrom')}`
      : change.change === 'withdraw_price' && set !== undefined
        ? `the scheduled price recorded ${changeInstant(set)}`
        : 'a scheduled price, withdrawn since';
  });
  const whichWidth = widest(whiches);
  const changeLines = changes.map((change, i) => {
    const label = changeLabel(change);
    const columns = `  ${instants[i].padEnd(instantWidth)}  ${label.padEnd(CHANGE_WIDTH)}`;
    const author = authorColumns(change);
    return author === '' ? `${columns}${whiches[i]}` : `${columns}${whiches[i].padEnd(whichWidth)}  ${author}`;
  });

  const withdrawn = changes.filter((c) => c.change === 'withdraw_price').length;
  const counts = [plural(records.length, 'record'), ...(withdrawn > 0 ? [`${withdrawn} withdrawn`] : [])];
  const onSale = history.onSale ?? true;
  const availabilityChanged = changes.some((change) => change.change === 'availability');
  const availability =
    !onSale || availabilityChanged
      ? [`availability: ${onSale ? 'on sale' : 'off sale (ordering it fails with PRODUCT_UNAVAILABLE)'}`]
      : [];
  return [
    `${heading}: ${counts.join(', ')}, oldest first`,
    ...recordLines,
    ...availability,
    ...(changeLines.length > 0 ? ['changes, oldest first:', ...changeLines] : []),
  ]
    .map((line) => `${line}\n`)
    .join('');
}

/** Widths of the status and change columns: the longest word and a space. */
const STATUS_WIDTH = 'scheduled '.length;
const CHANGE_WIDTH = 'end withdrawn '.length;

const CHANGE_LABELS: Readonly<Record<string, string>> = {
  set: 'set',
  end: 'end set',
  withdraw_price: 'withdrawn',
  withdraw_end: 'end withdrawn',
  availability: 'availability',
};

/** What a change line says a change did: an availability change, what it set (as it was recorded before the log kept that: `availability`). */
function changeLabel(change: PriceChange): string {
  if (change.change === 'availability' && typeof change.onSale === 'boolean') {
    return change.onSale ? 'on sale' : 'off sale';
  }
  // Its own labels only: a stored kind such as `toString` names a member every object inherits.
  return Object.hasOwn(CHANGE_LABELS, change.change) ? CHANGE_LABELS[change.change] : escapeWord(change.change);
}

/** `actor  "reason"`: who and why, the reason quoted (JSON); empty for a write recorded before actors. */
export function authorColumns(change: Pick<PriceChange, 'actor' | 'reason'>): string {
  if (change.actor === null) return '';
  const actor = escapeWord(change.actor);
  return change.reason === null ? actor : `${actor}  ${quoteReason(change.reason)}`;
}

/** When a change was made, as formatInstant writes it (`iso`: always to the millisecond), whatever is stored. */
export function changeInstant(change: Pick<PriceChange, 'changedAt' | 'changedAtText'>, form?: 'iso'): string {
  if (change.changedAtText !== undefined) return storedInstant(change.changedAtText, form);
  return form === 'iso' ? isoString(change.changedAt) : formatInstant(change.changedAt);
}

function recordInstant(record: HistoryRecord, instant: 'validFrom' | 'validUntil' | 'recordedAt'): string {
  const text = record.instantTexts?.[instant];
  return text !== undefined ? storedInstant(text) : formatInstant(record[instant] ?? NaN);
}

/** `amount per unit_count unit_type`, each escaped. */
function termsText(record: PriceRecord): string {
  return `${escapeWord(record.amount)} per ${record.unitCount} ${escapeWord(record.unitType)}`;
}

/** A record of an effect as a line shows its terms and window: `amount per count unit from T[ until T]`, escaped. */
export function writtenTermsText(record: LoggedRecord): string {
  const until = record.valid_until === null ? '' : ` until ${storedInstant(record.valid_until)}`;
  return (
    `${escapeWord(record.amount)} per ${escapeWord(record.unit_count)} ${escapeWord(record.unit_type)} ` +
    `from ${storedInstant(record.valid_from)}${until}`
  );
}

/**
 * The history as JSON (`history --json`): the records and the change log, with who and why, each
 * change with the price as its write left it. JSON escapes (escapeJson) for what JSON.stringify
 * leaves raw: U+2028, U+2029, C1 and bidirectional controls.
 */
export function historyJson(
  history: PriceHistory,
  productKey: string,
  organizationId: string | null,
  now: number,
): string {
  const document = {
    product_key: productKey,
    organization_id: organizationId,
    on_sale: history.onSale ?? true,
    records: history.records.map((record) => ({
      status: statusAt(record, now),
      unit_type: record.unitType,
      unit_count: record.unitCount,
      amount: record.amount,
      valid_from: recordInstant(record, 'validFrom'),
      valid_until: record.validUntil === null ? null : recordInstant(record, 'validUntil'),
      recorded_at: recordInstant(record, 'recordedAt'),
    })),
    changes: history.changes.map(changeJson),
  };
  return `${escapeJson(JSON.stringify(document, null, 2))}\n`;
}

/**
 * One change as JSON: when, what, who and why, the price as its write left it (`null` for none),
 * and what an availability change set (`on_sale`; `null` for the other kinds, and before the log kept it).
 */
export function changeJson(change: PriceChange): Record<string, unknown> {
  const record = writtenRecord(change);
  return {
    at: changeInstant(change),
    change: change.change,
    actor: change.actor,
    reason: change.reason,
    price: record ? writtenTermsJson(record) : null,
    on_sale: change.onSale ?? null,
  };
}

function writtenTermsJson(record: LoggedRecord): Record<string, unknown> {
  return {
    unit_type: record.unit_type,
    unit_count: /^\d{1,15}$/.test(record.unit_count) ? Number(record.unit_count) : record.unit_count,
    amount: record.amount,
    valid_from: storedInstant(record.valid_from),
    valid_until: record.valid_until === null ? null : storedInstant(record.valid_until),
  };
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
