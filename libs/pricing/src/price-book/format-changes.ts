import { formatInstant } from '../core/instant';
import { quoteReason } from './author';
import { changeJson, type LoggedChange } from './format-history';

/** Least widths of the columns that line up; a longer value pushes the rest, and stays one word. */
const KIND_WIDTH = 'withdraw_price'.length;
const KEY_WIDTH = 24;
const SCOPE_WIDTH = 16;

/**
 * The change log of every key and scope as the `changes` command prints it, one line per change,
 * oldest first (docs/price-book-cli.md, "changes"): instant (to the millisecond), kind, product key, scope (`list`,
 * `org:<id>`, `-` for availability), the price the change names as it is now (for availability,
 * `on-sale` or `off-sale`, what it set, `-` when recorded before the log kept it), actor (`-` for a
 * write recorded before actors were), and the reason quoted as a JSON string. Columns are apart by
 * at least two spaces, words within one by one; the first four have no spaces and line up, as the
 * plan lines' do, so that `awk '$3 == "compute.g2.4"'` picks a key's changes.
 */
export function changeLines(changes: readonly LoggedChange[]): string {
  let text = '';
  for (const change of changes) {
    const scope =
      change.change === 'availability' ? '-' : change.organizationId === null ? 'list' : `org:${change.organizationId}`;
    const columns = [
      new Date(change.changedAt).toISOString(), // always 24 characters, milliseconds included
      change.change.padEnd(KIND_WIDTH),
      change.productKey.padEnd(KEY_WIDTH),
      scope.padEnd(SCOPE_WIDTH),
      priceText(change),
      change.actor ?? '-',
      ...(change.reason === null ? [] : [quoteReason(change.reason)]),
    ];
    text += `${columns.join('  ')}\n`;
  }
  return text;
}

/** A change as `changes --json` gives it: changeJson with the key and the scope. */
export function loggedChangeJson(change: LoggedChange): Record<string, unknown> {
  const { at, change: kind, ...rest } = changeJson(change, change.record);
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
  const record = change.record;
  if (record) {
    const until = record.validUntil !== null ? ` until ${formatInstant(record.validUntil)}` : '';
    return `${record.amount} per ${record.unitCount} ${record.unitType} from ${formatInstant(record.validFrom)}${until}`;
  }
  // What an availability change set, in the plan lines' words; `-` when recorded before the log kept it.
  if (change.change === 'availability') return change.onSale === null ? '-' : change.onSale ? 'on-sale' : 'off-sale';
  // A record is gone only when withdrawn: its set and end rows say so too, as history's do.
  return 'a scheduled price, withdrawn';
}
