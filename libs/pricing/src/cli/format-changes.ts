import { escapeWord } from '../errors/bounded-text';
import { writtenRecord, type LoggedChange } from '../price-book/price-history';
import { changeInstant, changeJson, quoteReason, writtenTermsText } from './format-history';

/** Least widths of the columns that line up; a longer value pushes the rest, and stays one word. */
const KIND_WIDTH = 'withdraw_price'.length;
const KEY_WIDTH = 24;
const SCOPE_WIDTH = 16;

/**
 * The change log of every key and scope as the `changes` command prints it, one line per change,
 * oldest first (docs/price-book-cli.md, "changes"): instant (to the millisecond), kind, product key, scope (`list`,
 * `org:<id>`, `-` for availability), the price as the write left it (for availability, `on-sale`
 * or `off-sale`, what it set, `-` when recorded before the log kept it), actor (`-` for a write
 * recorded before actors were), and the reason quoted as a JSON string. Columns are apart by at
 * least two spaces, words within one by one; the first four have no spaces and line up, as the
 * plan lines' do, so that `awk '$3 == "compute.g2.4"'` picks a key's changes. Every stored value
 * is escaped (escapeWord: no row can act on the terminal, or pass for another column) and any
 * stored instant shown.
 */
export function changeLines(changes: readonly LoggedChange[]): string {
  let text = '';
  for (const change of changes) {
    const scope =
      change.change === 'availability'
        ? '-'
        : change.organizationId === null
          ? 'list'
          : `org:${escapeWord(change.organizationId)}`;
    const columns = [
      changeInstant(change, 'iso'), // 24 characters, milliseconds included, for every instant a Date holds
      escapeWord(change.change).padEnd(KIND_WIDTH),
      escapeWord(change.productKey).padEnd(KEY_WIDTH),
      scope.padEnd(SCOPE_WIDTH),
      priceText(change),
      change.actor === null ? '-' : escapeWord(change.actor),
      ...(change.reason === null ? [] : [quoteReason(change.reason)]),
    ];
    text += `${columns.join('  ')}\n`;
  }
  return text;
}

/** A change as `changes --json` gives it: changeJson with the key and the scope. */
export function loggedChangeJson(change: LoggedChange): Record<string, unknown> {
  const { at, change: kind, ...rest } = changeJson(change);
  return {
    at,
    change: kind,
    product_key: change.productKey,
    organization_id: change.organizationId,
    ...rest,
    on_sale: change.onSale,
  };
}

function priceText(change: LoggedChange): string {
  // What an availability change set, in the plan lines' words; `-` when recorded before the log kept it.
  if (change.change === 'availability') return change.onSale === null ? '-' : change.onSale ? 'on-sale' : 'off-sale';
  const record = writtenRecord(change);
  if (record) return writtenTermsText(record);
  // A withdrawn price, and the rows before the chain of a record gone by then; `-`: no effect of the log's form.
  return record === null ? 'a scheduled price, withdrawn' : '-';
}
